#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "absl/status/statusor.h"
#include "codec/extender_json.h"
#include "codec/node_topology.h"
#include "decision/capacity_ask.h"
#include "decision/capacity_hold.h"
#include "decision/claim_demand.h"
#include "decision/claim_fit.h"
#include "decision/gang.h"
#include "decision/gang_book.h"
#include "decision/gang_capacity_target.h"
#include "decision/nvlink_domain.h"
#include "decision/pod_filter.h"
#include "decision/pod_demand.h"
#include "history/recorder.h"
#include "history/refusal_aggregator.h"
#include "ledger/ledger.h"
#include "scheduler/bind_authorization.h"
#include "scheduler/capacity_requests.h"
#include "decision/claim_pod_demand.h"
#include "decision/compute_domain.h"
#include "scheduler/dra_view.h"
#include "scheduler/drain_guard.h"
#include "scheduler/extender_metrics.h"
#include "scheduler/gpu_state.h"
#include "scheduler/kube_client.h"
#include "scheduler/leadership.h"
#include "scheduler/pending_pods.h"
#include "scheduler/warm_source.h"
#include "server/clock.h"

namespace topofit::scheduler {

// The extender's four verbs over decoded wire types: a thin layer that feeds the GPU state, calls the
// pure decision functions (filter.h, prioritize.h, preempt.h), records placement preferences, and binds.
// The HTTP adapter (extender_http.h) only decodes, calls this, and encodes. Thread-safe.
//
// Errors a caller made (a body topofit cannot read) are returned as statuses for the adapter to turn into
// 4xx replies; outcomes kube-scheduler expects in the reply body (a node refused, a failed bind) are in the
// result. A node name topofit has not seen yet (nodeCacheCapable: the node watch lags kube-scheduler's
// cache) fails that node alone: FailedNodes in filter, the lowest score in prioritize, declined in preempt.
class Extender {
 public:
  // `capacity` may be null: no capacity is requested for refused pods (a single process without CA). Only
  // while `leadership` says this replica leads does it bind or request capacity.
  // `clock` stamps the bind time on the pods it binds (`topofit.io/bound-at`). It binds only pods whose
  // spec.schedulerName is `scheduler_name` (bind_authorization.h).
  Extender(GpuState& state, ledger::Ledger& ledger, KubeClient& kube, ExtenderMetrics& metrics,
           spdlog::logger& log, const server::Clock& clock, CapacityRequests* capacity = nullptr,
           const Leadership& leadership = SoleReplica(), std::string scheduler_name = std::string(kDefaultSchedulerName));

  // Decodes the body of a filter or prioritize request; nodes the state holds at the same resourceVersion
  // are located but not decoded (codec::ParseExtenderArgs). The result views into `body`.
  absl::StatusOr<codec::ExtenderArgs> ParseArgs(const std::string& body) const;

  absl::StatusOr<codec::ExtenderFilterResult> Filter(const codec::ExtenderArgs& args);
  absl::StatusOr<std::vector<codec::HostPriority>> Prioritize(const codec::ExtenderArgs& args);
  // An empty string on success, else the error for ExtenderBindingResult.Error. A follower binds nothing
  // and says so: kube-scheduler puts the pod back in its queue and tries again. A bind the API server's pod
  // does not authorise (bind_authorization.h) is refused, counted and logged, and writes nothing.
  absl::StatusOr<std::string> Bind(const codec::ExtenderBindingArgs& args);
  absl::StatusOr<std::map<std::string, codec::MetaVictims>> Preempt(const codec::ExtenderPreemptionArgs& args);

  // A pod is gone (the admin endpoint now, a watch later): release its GPUs and its preference. False
  // when topofit knew no GPUs of it.
  bool PodDeleted(const std::string& pod_uid);
  // A pod holds GPUs on a node (the admin endpoint now, a watch later); see GpuState::ObservePod.
  absl::Status PodReported(const PodRef& pod, const std::string& node, int gpus, std::optional<topology::GpuSet> ids);

  // Where filter verdicts, preferences, capacity requests and binds of GPU pods are recorded (null: not
  // recorded). Set before serving; the recorder must outlive the extender and never block.
  void RecordDecisionsTo(history::DecisionRecorder* recorder) { recorder_ = recorder; }
  // How long a pod that prefers a topology waits for the capacity scaled up for it rather than take a
  // poorer set now (decision/capacity_wait.h; the default unless set). Set before serving.
  void WaitForCapacity(const decision::CapacityWaitPolicy& policy) { capacity_wait_ = policy; }
  // Pods bound on the topology they would refuse or wait for elsewhere are kept from CA's scale-down
  // drains by `guard` (not owned, outlives this; drain_guard.h). Unset, bind annotates no such pod. Set
  // before serving.
  void GuardFromDrains(DrainGuard* guard) { drain_guard_ = guard; }
  // A bind reads its pod from `pods` (not owned, outlives this; pending_pods.h) when it holds the pod with the
  // bind's uid, and GETs it otherwise. Unset, every bind GETs its pod. Set before serving.
  void ReadPendingPodsFrom(const PendingPods* pods) { pending_pods_ = pods; }
  // How gangs are placed all or nothing (decision/gang_book.h) and which node labels name an NVLink
  // domain (decision/nvlink_domain.h); the defaults unless set. Set before serving.
  void PlaceGangs(decision::NvlinkDomainLabels domain_labels, decision::GangBookOptions book) {
    domain_labels_ = std::move(domain_labels);
    gangs_ = decision::GangBook(book);
  }
  // Pods whose GPUs come from ResourceClaims are filtered and prioritized by what their claims ask of the
  // GPUs `dra` publishes (not owned, outlives this; docs/dra.md). Unset, such pods ask no GPU of topofit.
  // Set before serving.
  void JudgeClaimsWith(const DraView* dra);
  // Prioritize scores down the nodes where a device-plugin pod's set would break the sets of the buffers
  // `warm` holds (not owned, outlives this; decision/warm_capacity.h). Unset, it keeps no buffered set
  // whole. Set before serving.
  void KeepWarmFrom(const WarmSource* warm) { warm_ = warm; }
  // The pods of a ComputeDomain (NVIDIA's multi-node NVLink domain, decision/compute_domain.h) are placed as
  // one gang in one NVLink domain, one per node, never on a node another domain holds; `domains` finds a
  // pod's domain by its channel claim template (docs/gangs.md, "ComputeDomains"). Unset, such pods are
  // placed as their other labels say. Set before serving.
  void JoinComputeDomainsFrom(decision::ComputeDomainSource domains) { compute_domains_ = std::move(domains); }
  // The domains JoinComputeDomainsFrom gave; null without. Lives as long as the extender.
  const decision::ComputeDomainSource* compute_domain_source() const {
    return compute_domains_ ? &compute_domains_ : nullptr;
  }
  // The claims JudgeClaimsWith gave, as decisions read them; null without. Lives as long as the extender.
  const decision::ClaimSource* claim_source() const { return dra_ != nullptr ? &claims_ : nullptr; }

 private:
  // The snapshots of the nodes a request names, learning nodes sent in full. Names topofit does not know
  // (NodeNames requests) are in `unknown`, nodes whose topology cannot be resolved in `unresolved`, each
  // with the reason.
  struct RequestNodes {
    std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> snapshots;  // in request order
    // Parallel: each node's name as the request gave it. Read in place of the snapshot's own copy, which
    // is one more cache miss per node in a request over thousands.
    std::vector<absl::string_view> names;
    std::vector<absl::string_view> raw;                             // parallel, for Nodes requests
    std::map<std::string, std::string> unresolved;
    std::map<std::string, std::string> unknown;
    std::map<std::string, std::string> outside_domain;  // RefuseOutside's, with the reason
  };
  absl::StatusOr<RequestNodes> NodesOf(const codec::ExtenderArgs& args);
  // What the pod asks of GPUs through its ResourceClaims (decision::ClaimGpuDemandOf); nullopt when nothing,
  // or no DraView is set. `demand`: its device-plugin demand, which must then ask no GPU.
  absl::StatusOr<std::optional<decision::ClaimGpuDemand>> ClaimDemandOf(const kube::Pod& pod,
                                                                       const decision::GpuDemand& demand) const;
  decision::ClaimNodeVerdict JudgeClaims(const decision::ClaimGpuDemand& claims, const decision::GpuDemand& demand,
                                         const decision::NodeGpuSnapshot& node) const;
  // decision::FilterPod's outcome for a pod whose GPUs come from claims (extender_claims.cc): each node judged
  // by JudgeClaims, then by the holds and the capacity it waits for (decision::HoldsAndAskOn, without an
  // ask: the DRA allocator, not topofit, picks a claim pod's devices on a node, so no set can be promised
  // for waiting); `reasons` gets each refused node's words (empty for a node it fits).
  decision::PodFilterOutcome FilterClaims(const decision::ClaimGpuDemand& claims, const decision::GpuDemand& demand,
                                          const decision::JudgedPod& pod,
                                          const std::vector<const decision::NodeGpuSnapshot*>& nodes,
                                          const decision::CapacityHolds& holds, std::vector<std::string>& reasons) const;
  // The reply to a pod whose own fields are wrong (every node would fail alike): said once, as the error.
  codec::ExtenderFilterResult InvalidPod(const kube::Pod& pod, const std::string& pod_key, absl::string_view message);
  // The snapshots with the GPUs reserved for gangs other than `gang` (an id, GangIdOf; empty: every gang)
  // counted as taken. Called with gangs_mu_ held.
  std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> WithoutReserved(
      std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> snapshots, absl::string_view gang) const;
  // Drops the gang reservations past their time, logging each. Called with gangs_mu_ held.
  void ExpireGangs();
  // Filter for a member of a gang of known size (decision/gang_book.h): reserves the whole gang's places
  // on the first member's call, steers each member to its place, refuses every node while the gang has no
  // room. nullopt when the pod places as a single pod (its gang landed, or every place is taken).
  // `domain`: the ComputeDomain the members join, null when none. `claims`: what a member whose GPUs come
  // from ResourceClaims asks (null for a device-plugin pod; `demand` is then its count, `own` the pod's own
  // DemandOf): only nodes where its claims are met hold members.
  std::optional<codec::ExtenderFilterResult> FilterGangMember(const codec::ExtenderArgs& args,
                                                              const decision::GpuDemand& demand,
                                                              const decision::Gang& gang, const RequestNodes& nodes,
                                                              const kube::ComputeDomain* domain,
                                                              const decision::ClaimGpuDemand* claims,
                                                              const decision::GpuDemand& own);
  // Whether the gang of a member whose GPUs come from `claims` can be placed all at once: each node's first
  // member is judged on its claims, the next ones by their count alone, which is right when the claims
  // select no particular GPUs (no selector, no matchAttribute, not All) or when a node holds one member
  // (a ComputeDomain's pods). Otherwise its members place as single pods.
  static bool GangPlacesClaims(const decision::ClaimGpuDemand& claims, const kube::ComputeDomain* domain);
  // The ComputeDomain the pod joins (decision::ComputeDomainOf over JoinComputeDomainsFrom's domains);
  // nullopt when it joins none or no domains are read.
  absl::StatusOr<std::optional<kube::ComputeDomain>> ComputeDomainOf(const kube::Pod& pod) const;
  // Moves the nodes that cannot take a pod of `domain` (decision::ComputeDomainRefusal, with the domains
  // this extender bound pods for) to `outside_domain`, refused as unresolvable: no preemption makes another
  // domain's node or clique fit.
  void RefuseOutside(const kube::ComputeDomain& domain, RequestNodes& nodes);
  // The uid of the ComputeDomain whose pod this extender bound to each node within
  // kComputeDomainBindMemory, by node: the driver labels a node and lists it in the domain's status only once
  // the kubelet prepares the pod's channel. Until then a pod of another domain bound there would never
  // start, and the domain's next pods would not know the clique it runs in.
  std::map<std::string, std::string, std::less<>> DomainsBoundNow();
  // `domain` with the nodes `bound` names for it among its status's nodes, as the driver will list them.
  kube::ComputeDomain WithBoundNodes(const kube::ComputeDomain& domain,
                                     const std::map<std::string, std::string, std::less<>>& bound) const;
  // decision::ComputeDomainRefusal of `node` (with `labels`) for `joined` (WithBoundNodes), the node's own
  // bound domain read from `bound`.
  static std::optional<std::string> RefusalWithBinds(const kube::ComputeDomain& joined,
                                                     const std::map<std::string, std::string, std::less<>>& bound,
                                                     absl::string_view node, const kube::StringMap& labels);
  // Refusal of a bind of a pod of `domain` to `node` that another domain holds (two filters raced and both
  // passed it), "" when it may bind.
  std::string ComputeDomainBindGate(const kube::ComputeDomain& domain, const std::string& node);
  // After a pod of `domain` was bound to `node`: BoundDomainOn says so until the driver's label does.
  void RememberDomainBind(const kube::ComputeDomain& domain, const std::string& node);
  // Whether a gang member may bind to `node` now, and with which GPUs: an error while the gang's places
  // are not all joined (no member binds before every member has its place) or the pod's place is
  // elsewhere; `reserved` set to its place's GPUs when it has one.
  // `claim_pod`: its GPUs come from claims (the DRA plugin allocated them before the bind).
  // `domain`: the ComputeDomain the pod joins (ComputeDomainOf), null when none.
  std::string GangBindGate(const kube::Pod& pod, const kube::ComputeDomain* domain,
                           const codec::ExtenderBindingArgs& args, bool claim_pod,
                           std::optional<topology::GpuSet>& reserved);

  // The pod's gang when its count is known: the source's own, or for the Workload API gang.minCount of
  // the PodGroup or Workload the pod names (KubeClient::WorkloadGangMinCount, remembered per gang); nullopt
  // when the pod is in no gang, its group's policy is basic, or the object cannot be read (logged: the
  // pod then places as a single pod, and its next filter reads again). `domain`: the ComputeDomain the pod
  // joins (ComputeDomainOf, read once by the caller), whose pods are its gang; null when none.
  // InvalidArgument as decision::GangOf.
  absl::StatusOr<std::optional<decision::Gang>> CountedGangOf(const kube::Pod& pod, const kube::ComputeDomain* domain);
  // For a gang that no domain holds now: asks CA for capacity in the domain nearest to holding it
  // (decision/gang_capacity_target.h), once per gang, and has this member consume the request. The words
  // the refusal adds ("" when nothing was asked: not the leader, no CapacityRequests, a gang that must
  // share one node, or no domain that could hold it). A gang of claim pods (`claim_pods`) is asked for once
  // as many of its members as the request needs have asked, each a pod set naming its own claims, and at most
  // kMostClaimMembers of them. Called with gangs_mu_ held.
  std::string RequestGangCapacity(const kube::Pod& pod, const decision::GpuDemand& demand, const decision::Gang& gang,
                                  const decision::GangTopology& wanted, bool claim_pods);
  // Withdraws the gang's request, if this extender asked one. Called with gangs_mu_ held.
  void WithdrawGangCapacity(const std::string& gang);

  // The ledger's holds on new capacity, for a pod with this demand (none for pods without GPUs).
  decision::CapacityHolds HoldsNow(const decision::GpuDemand& demand) const;
  // The node shapes the cluster has and can grow (its nodes, the group templates the ledger holds), with
  // the snapshots `shapes` points into.
  struct ShapesNow {
    std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> snapshots;
    decision::ClusterShapes shapes;
  };
  ShapesNow ClusterShapesNow() const;
  // What the pod needs to decide whether it asks for capacity that gives its preferred topology
  // (decision/capacity_ask.h): the node shapes known, its first refusal; nullopt when it could not ask.
  std::optional<decision::CapacityAsk> AskNow(const kube::Pod& pod, const decision::GpuDemand& demand) const;
  // Filter asked for capacity for the pod: withdraw the request at bind (the pod's consume annotation
  // may not be written yet).
  void AskedCapacity(const std::string& pod_uid);
  bool HasAskedCapacity(const std::string& pod_uid);
  // Claims GPUs (`reserved`, a gang member's place, else the best set now), annotates and binds; on failure releases what this call claimed (never what an earlier
  // bind of the pod holds) and returns the error. Sets `gpu_ids` to the GPUs the pod holds. Unless the pod
  // `says_safe_to_evict` itself, hands it to the drain guard where decision::KeepFromScaleDownDrain names it.
  // `judged`: the pod as the holds weigh it (the stored pod's uid and creation time).
  // Called with the pod's bind lock held (PodBindLock).
  std::string BindOnce(const codec::ExtenderBindingArgs& args, const PodRef& pod, const decision::JudgedPod& judged,
                       const decision::GpuDemand& demand, bool asked_capacity, bool says_safe_to_evict,
                       const std::optional<topology::GpuSet>& reserved, std::string& gpu_ids);
  // The pod a bind is for as the API server holds it: the pending pods' copy when it has the bind's uid
  // (one API call less), else a GET.
  absl::StatusOr<kube::Pod> PodToBind(const codec::ExtenderBindingArgs& args);
  // A repeated bind whose Binding the API server refused: success when the pod is bound to `node`
  // already (an earlier bind of ours landed), else the error.
  // A claim pod's bind (extender_claims.cc): the Binding alone, no GPU taken nor annotated; the drain guard
  // then judges the devices its claims hold once the claim watch shows them (DrainGuard::TrackClaims),
  // unless the pod says whether it is safe to evict.
  std::string BindClaimPod(const codec::ExtenderBindingArgs& args, const PodRef& pod, const kube::Pod& stored,
                           bool asked_capacity, bool says_safe_to_evict);
  // After a pod landed: its preference is served, and the capacity it asked for is withdrawn.
  void Landed(const PodRef& pod, bool asked_capacity);
  std::string RepeatedBindOutcome(const codec::ExtenderBindingArgs& args, const absl::Status& bound);
  // kube-scheduler retries a bind that outlived its httpTimeout while the first may still be running:
  // binds of one pod run one at a time, so a retry sees what the first claimed and did.
  std::shared_ptr<std::mutex> PodBindLock(const std::string& pod_uid);
  void ReleasePodBindLock(const std::string& pod_uid, std::shared_ptr<std::mutex> lock);
  // Asks CA for capacity the pod no node took can use (a leader with a CapacityRequests only); whether it
  // asked.
  bool RequestCapacity(const kube::Pod& pod, const decision::Preference& preference);
  // Hands the preference of a GPU pod no node took to the ledger, where the expander reads it.
  void KeepPreference(decision::Preference preference);
  // Hands one filter cycle's records (history::FilterCycleRecords) to the recorder, unless the filter's
  // record repeats the pod's last one (RefusalAggregator): then the rest would repeat too, and none is kept.
  void RecordCycle(std::vector<history::Record> records);

  GpuState& state_;
  ledger::Ledger& ledger_;
  KubeClient& kube_;
  ExtenderMetrics& metrics_;
  spdlog::logger& log_;
  const server::Clock& clock_;
  CapacityRequests* capacity_;
  DrainGuard* drain_guard_ = nullptr;
  const PendingPods* pending_pods_ = nullptr;
  const Leadership& leadership_;
  history::DecisionRecorder* recorder_ = nullptr;
  const DraView* dra_ = nullptr;
  const WarmSource* warm_ = nullptr;
  decision::ComputeDomainSource compute_domains_;  // empty: none read
  static constexpr absl::Duration kComputeDomainBindMemory = absl::Minutes(10);
  struct DomainBind {
    std::string uid;
    absl::Time at;
  };
  std::mutex domain_binds_mu_;
  std::map<std::string, DomainBind, std::less<>> domain_binds_;  // by node, under domain_binds_mu_
  decision::ClaimSource claims_;  // dra_'s claims, as decision::PodClaimDemandOf reads them
  history::RefusalAggregator refusals_;  // on clock_'s time
  decision::CapacityWaitPolicy capacity_wait_;
  mutable codec::TopologyResolver group_topologies_;  // of the node group templates the ledger holds (AskNow)

  const std::string scheduler_name_;

  // Pods filter asked capacity for, bounded (the oldest is forgotten first; a pod that binds after that
  // still has its request withdrawn when its consume annotation was written). PodDeleted forgets one.
  static constexpr size_t kAskedCapacityRemembered = 16384;
  std::mutex binding_mu_;
  std::map<std::string, std::shared_ptr<std::mutex>> binding_;  // pods with a bind running or waiting
  // Gang reservations: filter and bind of every member go through them, one at a time.
  mutable std::mutex gangs_mu_;
  decision::GangBook gangs_;
  decision::NvlinkDomainLabels domain_labels_ = decision::NvlinkDomainLabels::Default();
  // Workload API gangs' counts as their objects said, by gang id; bounded (the oldest is forgotten first).
  // A failed read is remembered for kWorkloadCountRetry, so that a pod whose object is missing or
  // forbidden does not cost a GET on every filter.
  static constexpr size_t kWorkloadCountsRemembered = 16384;
  static constexpr absl::Duration kWorkloadCountRetry = absl::Seconds(30);
  struct WorkloadCount {
    std::optional<int> count;                 // nullopt: policy basic, or not read
    std::optional<absl::Time> failed_until;   // set: the read failed; read again from then
  };
  std::mutex workload_counts_mu_;
  std::map<std::string, WorkloadCount> workload_counts_;
  std::deque<std::string> workload_counts_order_;
  // The gangs asked capacity for (RequestGangCapacity), by gang id, with the members that asked: the
  // request is withdrawn when the gang lands or one of them goes. Guarded by gangs_mu_.
  struct GangAsked {
    GangRef gang;
    std::map<std::string, PodRef> members;  // by uid
    // Where and how much it asked, measured over every node and template at `measured`: reused for the
    // members that come within kGangTargetReuse, since each would measure the same cluster again.
    decision::GangCapacityTarget target;
    absl::Time measured;
  };
  static constexpr absl::Duration kGangTargetReuse = absl::Minutes(1);
  std::map<std::string, GangAsked> gang_asks_;
  std::mutex asked_mu_;
  std::set<std::string> asked_capacity_;
  std::deque<std::string> asked_order_;
};

}  // namespace topofit::scheduler
