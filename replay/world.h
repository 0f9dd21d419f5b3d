#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "replay/draws.h"
#include "replay/policy.h"
#include "replay/workload.h"
#include "kube/node_templates.h"
#include "kube/objects.h"
#include "decision/headroom_plan.h"
#include "decision/node_snapshot.h"
#include "decision/nvlink_domain.h"
#include "decision/preference.h"
#include "decision/pod_demand.h"
#include "history/recorder.h"
#include "kube/dra_objects.h"
#include "topology/gpu_set.h"

namespace topofit::sim {

// A node group during a replay: its spec, the template node CA (and topofit's expander) sees, and the
// topology that template resolves to — the same resolution the extender applies to the group's real nodes.
struct GroupState {
  NodeGroupSpec spec;
  kube::Node template_node;
  std::shared_ptr<const topology::Topology> topology;  // nullptr for a group without GPUs
  std::string topology_origin;
  int gpus = 0;    // per node
  int target = 0;  // nodes requested and not removed (CA's target size)
  int requested = 0;  // nodes ever requested (the next one's ordinal)
  std::vector<bool> slot_taken;  // by slot (NodeGroupSpec::nodes_per_domain): whether a live node holds it
};

enum class NodeState { kProvisioning, kReady, kRemoved };

struct SimNode {
  int id = 0;
  int group = 0;
  NodeState state = NodeState::kProvisioning;
  SimTime requested = 0;
  int ordinal = 0;  // among the nodes of its group ever requested: what its boot draws are keyed by
  int slot = 0;     // its place in its group's hardware (NodeGroupSpec::nodes_per_domain)
  // The multi-node NVLink domain its labels name; nullopt for a group whose nodes form none.
  std::optional<decision::NvlinkDomain> domain;
  SimTime ready_at = -1;  // -1 until Ready
  SimTime removed_at = -1;
  int64_t cpu_used = 0;
  int64_t memory_used = 0;
  // The node as the extender's decision functions see it: `ours` holds every GPU in use (in the replay
  // the scheduler knows every holder's ids).
  decision::NodeGpuSnapshot gpus;
  std::vector<int> pods;        // running pods
  SimTime unneeded_since = -1;  // CA's scale-down clock
  int scale_up = -1;            // the scale-up that created it
  SimTime booked_until = -1;    // CA's simulation holds it for a ProvisioningRequest until then
  SimTime first_served = -1;    // when a pod of its scale-up first started on it
  SimTime first_pod = -1;       // when any pod first started on it
  int used_gpus() const { return gpus.ours.size(); }
  int free_gpus() const { return gpus.topology ? gpus.topology->gpu_count() - used_gpus() : 0; }
};

// Pods that are identical to every scheduling decision (resources, products, topology annotations,
// priority) share a class: a decision made for one holds for all of them on an unchanged node.
struct PodClass {
  int gpus = 0;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int priority = 0;
  std::vector<bool> group_allowed;  // by node selector/affinity and taints, against each group's template
  // The weight of its preferred node affinity terms each group's template matches (all 0 without any).
  std::vector<int64_t> group_preference;
  kube::Pod prototype;              // as the API would hold it, without name and uid
  decision::GpuDemand demand;      // DemandOf(prototype)
  // For multi-GPU classes: the best estimated bandwidth a set of `gpus` reaches on any group the class
  // may run on — its best possible topology, the slowdown model's reference.
  int64_t best_mbps = 0;
  // The cheapest per-GPU price of the groups the class may run on (its spec's selector and tolerations)
  // that can give its required topology: the cost lower bound's rate, the same in every world.
  double cheapest_gpu_hour = 0;
};

enum class PodPhase { kFuture, kPending, kRunning, kDone };

struct SimPod {
  int spec = 0;   // index into Workload::pods
  int klass = 0;  // index into World::classes
  PodPhase phase = PodPhase::kFuture;
  bool unschedulable = false;         // the scheduler tried and failed: CA may scale up for it
  bool refused_for_topology = false;  // count-feasible nodes existed, topofit refused all of them
  // The set its preference asks of new capacity (kAsked: it asked for capacity giving its preferred set).
  decision::PreferredSet preferred_set = decision::PreferredSet::kEnforced;
  int node = -1;
  topology::GpuSet gpus;
  SimTime first_start = -1;
  SimTime finish = -1;
  int64_t remaining_ideal = 0;  // run time left on an ideal GPU set (evicted pods resume)
  double stretch = 1;           // of its current (last) placement
  bool best_topology = false;   // its (first) multi-GPU set reached its class's best_mbps
  int epoch = 0;                // bumped when its run stops early: stale finish events are ignored
  int evictions = 0;
  int scale_up = -1;            // the last scale-up CA made for it
  int provisioning_request = -1;
  // The drain guard tracks it (topofit's extender, decision::KeepFromScaleDownDrain): it carries CA's
  // safe-to-evict "false", and CA's scale-down leaves its node alone, while no other busy node gives it its
  // topology (AutoscalerModel::KeptFromDrain).
  bool drain_guarded = false;
  int gang = -1;  // index into World::gangs(); -1: in none
};

// A gang of the workload (PodSpec::gang) during a replay. Its run makes progress only while every member
// runs: members started before the last hold their GPUs for nothing (partial gang GPU-hours).
struct SimGang {
  std::string name;
  std::vector<int> members;  // pod ids, in workload order
  int running = 0;           // members running now
  SimTime started = -1;      // when its run last began (every member running); -1 while it waits
  SimTime first_started = -1;
  // Its members ran over more than the level it asked for (several domains, or several nodes for a gang
  // asking for one node) when its run first began.
  bool split = false;
};

// A ProvisioningRequest topofit created (best-effort-atomic-scale-up class): for one pod refused for its
// topology, or for a gang no NVLink domain holds now (replay/gang_scheduling.h, GangDomainAskFor): every
// pending member consumes it, and it asks for new nodes, in one domain, for the members that domain's free
// nodes lack — CA grows nodes for all of those in one group, or none.
struct ProvisioningRequest {
  std::vector<int> pods;
  bool gang = false;
  int new_pods = 0;  // for a gang: how many of `pods` (the last ones) need new nodes
  std::vector<int> excluded_nodes;  // kubernetes.io/hostname NotIn [the nodes topofit refused]
  // The shapes whose empty node gives what the pod asks (decision/capacity_shapes.h), ORed; empty: any.
  std::vector<kube::NodeSelectorTerm> shapes;
  SimTime created = 0;
  SimTime next_attempt = 0;
  SimTime backoff = 0;
  SimTime provisioned_at = -1;  // Provisioned=True
};

struct ScaleUp {
  int group = 0;
  int nodes = 0;
  SimTime at = 0;
  bool for_provisioning_request = false;
  std::vector<int> pods;  // the pods CA's option was made for
  // Some of them were a CapacityBuffer's fake pods: its nodes serve whichever pod comes first.
  bool for_buffer = false;
};

// A CapacityBuffer during a replay (Policy::headroom). Its fake pods, as cluster-autoscaler injects them
// (capacity-buffer-<name>-<i>), are pods of the world after the workload's (World::IsBufferPod): never created
// in the API, never scheduled; the first `replicas` of `pods` are the ones CA sees now.
struct SimBuffer {
  decision::HeadroomShape shape;
  int klass = 0;          // its pod template's class: the first workload pod of its shape
  std::vector<int> pods;  // the most it can hold
  int replicas = 0;
};

// What is left of a node (or a fresh template node) for CA's count-only simulations.
struct FreeCapacity {
  int gpus = 0;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
};

// One change point of the cluster's totals.
struct TimelinePoint {
  SimTime at = 0;
  int provisioned_gpus = 0;  // on nodes requested and not removed
  int allocated_gpus = 0;    // held by running pods
  int pending_pods = 0;
  int nodes = 0;
  double price_per_hour = 0;  // of the nodes requested and not removed
  // Held by members of gangs whose run has not begun (SimGang): every one of them idle.
  int partial_gang_gpus = 0;
};

// Builds the replay's view of each node group: its template node and the topology that resolves to.
// InvalidArgument for a group whose taints or shape do not parse or resolve.
absl::StatusOr<std::vector<GroupState>> BuildGroups(const std::vector<NodeGroupSpec>& specs);

// The whole state of one replay, mutated only through its methods so that the running totals (GPU-hours,
// cost, the timeline) stay exact.
class World {
 public:
  static absl::StatusOr<std::unique_ptr<World>> Create(const Workload& workload, const Policy& policy, uint64_t seed);

  const Workload& workload() const { return workload_; }
  const Policy& policy() const { return policy_; }
  SimTime now() const { return now_; }
  // The replay's clock as a time: simulated milliseconds from the Unix epoch (what the ledger and the
  // decision history see; never the wall clock).
  absl::Time time() const { return TimeAt(now_); }
  // A replay time as topofit's code reads times (the replay starts at the Unix epoch).
  static absl::Time TimeAt(SimTime at) { return absl::UnixEpoch() + absl::Milliseconds(at); }
  // Where topofit's decisions in this replay are recorded; null: nowhere.
  history::DecisionRecorder* recorder() const { return recorder_; }
  void set_recorder(history::DecisionRecorder* recorder) { recorder_ = recorder; }
  // The replay's random choices, common to every policy of its seed.
  const Draws& draws() const { return draws_; }

  std::vector<GroupState>& groups() { return groups_; }
  const std::vector<GroupState>& groups() const { return groups_; }
  // Every group's template node by group name, as CA sends them to an expander (fixed once created).
  const kube::NodeTemplates& group_templates() const { return group_templates_; }
  std::vector<SimNode>& nodes() { return nodes_; }
  const std::vector<SimNode>& nodes() const { return nodes_; }
  std::vector<SimPod>& pods() { return pods_; }
  const std::vector<SimPod>& pods() const { return pods_; }
  const std::vector<PodClass>& classes() const { return classes_; }
  const PodSpec& spec(int pod) const {
    const size_t index = pods_[pod].spec;
    return index < workload_.pods.size() ? workload_.pods[index] : buffer_specs_[index - workload_.pods.size()];
  }
  // The workload's pods are the world's first; a CapacityBuffer's fake pods follow.
  int workload_pods() const { return static_cast<int>(workload_.pods.size()); }
  bool IsBufferPod(int pod) const { return pod >= workload_pods(); }
  const std::vector<SimBuffer>& buffers() const { return buffers_; }
  // The buffer a pod class's pods count for (Policy::headroom), or -1.
  int BufferOf(int klass) const { return buffer_of_class_[klass]; }
  // Sets how many of the buffer's fake pods CA sees (at most its pool); whether that changed.
  bool SetBufferReplicas(int buffer, int replicas);
  // The fake pods CA sees now, buffer by buffer.
  std::vector<int> ActiveBufferPods() const;
  const PodClass& klass(int pod) const { return classes_[pods_[pod].klass]; }
  const std::vector<SimGang>& gangs() const { return gangs_; }
  std::vector<ProvisioningRequest>& provisioning_requests() { return provisioning_requests_; }
  // Creates a request for its pod; returns its index.
  int CreateRequest(ProvisioningRequest request);
  // topofit deletes a request (its pod started, or it timed out).
  void DeleteRequest(int request);
  // The requests not deleted, by index (oldest first).
  const std::set<int>& open_requests() const { return open_requests_; }
  std::vector<ScaleUp>& scale_ups() { return scale_ups_; }
  const std::vector<ScaleUp>& scale_ups() const { return scale_ups_; }
  const std::vector<TimelinePoint>& timeline() const { return timeline_; }

  // The pod as the API would hold it (the class prototype with its name and uid), for topofit's code.
  // Under GpuApi::kDra a GPU pod names a claim template instead of requesting nvidia.com/gpu, and its
  // status names the claim made from it (ClaimObject).
  kube::Pod PodObject(int pod) const;
  // Under GpuApi::kDra, the GPU pod's ResourceClaim before allocation: its class's count of GPUs of
  // NVIDIA's driver, nothing else asked.
  kube::ResourceClaim ClaimObject(int pod) const;
  // That claim's name, as the pod's status names it.
  std::string ClaimName(int pod) const;
  // Its metadata.uid: "uid-<name>".
  std::string PodUid(int pod) const;

  // Whether a pod of `klass` passes kube-scheduler's built-in filters on a node of `group` with `free`
  // left (capacity by count, CPU, memory, node selector/affinity): what kube-scheduler and every CA
  // simulation check, GPU topology unseen.
  bool FitsByCount(int klass, int group, const FreeCapacity& free) const;
  bool FitsByCount(int klass, const SimNode& node) const { return FitsByCount(klass, node.group, FreeOf(node)); }
  FreeCapacity FreeOf(const SimNode& node) const;
  FreeCapacity EmptyOf(int group) const;
  void Take(FreeCapacity& free, int klass) const;

  const std::vector<int>& ready_nodes() const { return ready_nodes_; }
  // Nodes requested and not removed (provisioning or Ready), in id order: what CA's loops look at, without
  // walking every node a long replay ever had.
  const std::set<int>& live_nodes() const { return live_nodes_; }
  const std::set<int>& pending() const { return pending_; }

  // Moves the clock, integrating the totals over the elapsed time.
  void AdvanceTo(SimTime t);

  // A node requested now for `scale_up` (-1: none); Ready when MarkReady says so.
  int AddNode(int group, int scale_up);
  void MarkReady(int node);
  void RemoveNode(int node);
  // Starts `pod` on `node` holding `gpus`. Returns the pods whose run began now, their finish set: the pod
  // itself, or for a gang member every member once the last one started (none before).
  std::vector<int> StartPod(int pod, int node, topology::GpuSet gpus);
  void FinishPod(int pod);
  // Evicts a running pod (scale-down drain); it is pending again with its remaining work. Its gang's run
  // stops: the other members keep their GPUs and wait for it.
  void EvictPod(int pod);
  void SetPending(int pod);

  int pending_pods() const { return static_cast<int>(pending_.size()); }
  int running_pods() const { return running_count_; }
  int provisioning_nodes() const { return provisioning_count_; }
  double provisioned_gpu_ms() const { return provisioned_gpu_ms_; }
  double allocated_gpu_ms() const { return allocated_gpu_ms_; }
  double cost_dollars() const { return cost_dollars_; }
  int peak_nodes() const { return peak_nodes_; }

 private:
  World(const Workload& workload, const Policy& policy, uint64_t seed);
  void RecordTimeline();
  // How much longer than ideal the pod's current placement makes it run (slowdown.h; 1 for replicas).
  double TimeStretch(int pod) const;
  // The gang's run begins (every member runs): its split is judged and each member's finish set.
  void BeginGangRun(SimGang& gang);
  // Sets p.finish from its remaining work and stretch.
  void ScheduleFinish(SimPod& p);
  // The buffers Policy::headroom keeps and their fake pods, after the workload's pods.
  void AddBuffers();

  const Workload& workload_;
  Policy policy_;
  Draws draws_;
  SimTime now_ = 0;
  history::DecisionRecorder* recorder_ = nullptr;
  std::vector<GroupState> groups_;
  kube::NodeTemplates group_templates_;
  std::vector<SimNode> nodes_;
  std::vector<PodClass> classes_;
  std::vector<SimPod> pods_;
  std::vector<SimGang> gangs_;
  std::vector<PodSpec> buffer_specs_;  // the buffers' fake pods' (SimPod::spec past the workload's)
  std::vector<SimBuffer> buffers_;
  std::vector<int> buffer_of_class_;
  std::vector<ProvisioningRequest> provisioning_requests_;
  std::set<int> open_requests_;
  std::vector<ScaleUp> scale_ups_;
  std::vector<TimelinePoint> timeline_;
  std::vector<int> ready_nodes_;  // in the order they became Ready
  std::set<int> pending_;

  int provisioned_gpus_ = 0;
  int allocated_gpus_ = 0;
  double price_per_ms_ = 0;
  std::set<int> live_nodes_;  // requested and not removed, by id
  int peak_nodes_ = 0;
  int running_count_ = 0;
  int provisioning_count_ = 0;
  double provisioned_gpu_ms_ = 0;
  double allocated_gpu_ms_ = 0;
  double cost_dollars_ = 0;
  int partial_gang_gpus_ = 0;  // held now by members of gangs whose run has not begun
};

}  // namespace topofit::sim
