#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "decision/filter.h"
#include "decision/restart_diagnosis.h"
#include "history/idle_gpus.h"
#include "topology/allocator.h"

namespace topofit::history {

// Which front end decided.
enum class Component : uint8_t { kExtender, kExpander, kProvisioner, kAgent, kRestarts, kHeadroom };

// What was decided.
enum class Kind : uint8_t {
  kFilter,             // the extender judged the nodes offered for a pod
  kBind,               // the extender bound a pod (chosen GPU ids) or failed to
  kPreference,         // no node could serve a GPU pod: the capacity it needs went to the ledger
  kRanking,            // the expander judged cluster-autoscaler's options
  kIntent,             // the expander's choice: a group grows for these pods, its new GPUs held for them
  kCapacityRequested,  // a ProvisioningRequest was asked for a pod
  kCapacityWithdrawn,  // the ProvisioningRequest served (the pod bound)
  kGang,               // the extender placed a gang whole (reserved its places), found no room, or held a bind
  kIdle,               // a node's free GPUs by why they are idle, recorded when that changes
  kPreferredAllocation,  // the node agent answered the kubelet's GetPreferredAllocation
  kAllocation,           // the kubelet's Allocate: the devices a container of the pod got
  kRestart,              // a container of a pod restarted (the restart collector): why, and what it left
  kCapacityStatus,       // what cluster-autoscaler said of a ProvisioningRequest topofit made for a pod
  kHeadroom,             // the headroom controller changed a shape's warm capacity (its CapacityBuffer's replicas)
};
// The last kind: every Kind from kFilter to it has a name (KindName).
inline constexpr Kind kLastKind = Kind::kHeadroom;

// Why: a closed set. Past kFits come decision::Refusal's, from its one list (TOPOFIT_NODE_REFUSALS), so a
// filter refusal keeps its typed reason and code; the rest are the outcomes and losses of the other
// decisions.
enum class Reason : uint8_t {
  kFits,  // decision::Refusal::kNone
  TOPOFIT_NODE_REFUSALS(TOPOFIT_REFUSAL_ENUMERATOR)
  kTopologyUnknown,  // the node's topology could not be resolved
  kNodeUnknown,      // the request named a node topofit does not know
  kInvalidPod,       // the pod's topofit annotations do not parse
  kNoNodeFits,       // every offered node refused the pod
  kBound,            // bind: the pod holds these GPUs
  kBindFailed,
  kChosen,           // ranking: among the best, returned to cluster-autoscaler
  kGroupWouldStrand, // ranking: a GPU pod would not be placed on the group's new nodes
  kFewerPreferences, // ranking: lost on ledger preferences satisfied
  kHigherCostPerUsefulGpu,  // ranking: lost on price (or GPUs) per useful GPU-hour
  kFewerPodsPlaced,  // ranking: lost on pods placed
  kPassedThrough,    // ranking: no GPU pods, left to the rest of CA's expander chain
  kVetoed,           // ranking: every GPU option would strand, no scale-up this loop
  kAsChosen,         // agent: preferred, or given, the GPUs the extender chose for the pod
  kAllocatorFallback,  // agent: no pod waits with a choice of that size: topofit's allocator preferred
  kOtherDevices,     // agent: the kubelet gave the pod other devices than the extender chose
  kUnmatched,        // agent: the kubelet gave devices matched to no pod topofit bound
  kGangReserved,     // gang: every member's place reserved at once (candidates: the nodes, with counts)
  kGangNoRoom,       // gang: no node or NVLink domain offered holds all its members; they wait
  kGangWaiting,      // gang: a member's bind held until every member has joined its place
  // idle: history::IdleReason one for one (ReasonOfIdle), named by IdleReasonName.
  kIdleBooting,
  kIdleHeldForIntent,
  kIdleAwaitingScaleDown,
  kIdleFragmented,
  kIdleNoDemand,
  // restart: decision::RestartCause one for one (ReasonOfRestart), named by RestartCauseName.
  kRestartGpuFault,
  kRestartOutOfMemory,
  kRestartGpuOutOfMemory,
  kRestartEviction,
  kRestartImageOrConfig,
  kRestartLivenessProbe,
  kRestartApplicationError,
  kRestartCompleted,
  kRestartUnknown,
  // capacity-status: the ProvisioningRequest's conditions as cluster-autoscaler set them.
  kCapacityNotFound,        // Provisioned=False, CapacityIsNotFound: no group it may grow can take the pod now
  kCapacityFailed,          // Failed=True: cluster-autoscaler gave up on the request
  kCapacityBookingExpired,  // BookingExpired=True: the capacity came, and the pod did not take it in time
  kCapacityRevoked,         // CapacityRevoked=True: the capacity booked for it is gone
  // headroom: a shape's buffer grew (a rise of its pods over one boot came that it did not serve) or shrank
  // (its target stayed lower for the shrink delay).
  kHeadroomGrew,
  kHeadroomShrank,
};

// The reason a filter refusal gives, and back: the refusal a reason is, if it is one.
Reason ReasonOf(decision::Refusal refusal);
std::optional<decision::Refusal> RefusalOf(Reason reason);
// The reason an idle GPU's class gives (history/idle_gpus.h), and a restart's cause.
Reason ReasonOfIdle(IdleReason reason);
Reason ReasonOfRestart(decision::RestartCause cause);
// Stable names: decision::RefusalCode for the refusals ("min-link", ...; "fits" for kFits), kebab-case for
// the rest. They are what the database, /decisions and explain --json carry.
absl::string_view ComponentName(Component component);
absl::string_view KindName(Kind kind);
absl::string_view ReasonName(Reason reason);
absl::StatusOr<Component> ParseComponent(absl::string_view name);
absl::StatusOr<Kind> ParseKind(absl::string_view name);
absl::StatusOr<Reason> ParseReason(absl::string_view name);

// Which clock a record's time is on: the wall clock of a cluster, or a replay's, which starts at the Unix
// epoch (history/store.h, MarkReplayClock).
enum class RecordClock : uint8_t { kWall, kReplay };

// A GPU set and what it is worth: the set a pod got or could at best reach on a node.
struct TopologyDetail {
  std::string gpu_ids{};       // "0,1,2,3"
  std::string weakest_link{};  // nvidia-smi terms: NV, PIX, ..., SYS
  int64_t bandwidth_mbps = 0;
  // The node's topology was the PCIe-only fallback (topology/catalog.h): no instance type, GPU Feature
  // Discovery label or topofit.io/topology annotation said what it is, so a topology refusal may be wrong.
  bool assumed = false;
  friend bool operator==(const TopologyDetail&, const TopologyDetail&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const TopologyDetail& d) {
    return H::combine(std::move(h), d.gpu_ids, d.weakest_link, d.bandwidth_mbps, d.assumed);
  }
};
TopologyDetail DetailOf(const topology::Allocation& allocation);

// One node or node group a decision weighed, with its verdict.
struct Candidate {
  std::string name{};
  Reason reason = Reason::kFits;
  bool unresolvable = false;     // filter: no preemption can make it fit
  // Filter: what fell short, asked and the best the node reaches (GPUs, LinkClass rank or MB/s by the
  // reason). Ranking: the option's GPU pods its new nodes would refuse, and those they take. Intent: the
  // nodes asked for.
  int64_t requested = 0;
  int64_t available = 0;
  int free_gpus = 0;
  int held_gpus = 0;             // held for other pods' scale-ups
  std::optional<absl::Time> held_until{};  // when the holds stop refusing the pod (NodeVerdict::held_until)
  std::optional<TopologyDetail> topology{};  // the chosen set, or the best reachable one
  // Ranking: how the group's new nodes would serve the option's pods.
  int preferences_satisfied = 0;
  int64_t quality_per_mille = 0;
  int idle_gpus = 0;
  double price = 0;
  // How many nodes this candidate stands for: a filter keeps the nodes that fit as the first of them with
  // their count (FilterCandidates); every other candidate is one.
  int count = 1;
  friend bool operator==(const Candidate&, const Candidate&) = default;
  // Every field, as operator== compares them: RefusalAggregator tells a pod's identical refusals by it.
  template <typename H>
  friend H AbslHashValue(H h, const Candidate& c) {
    // The integers as one array, which absl hashes as one run of bytes: half the time of combining them
    // one by one, for every node a refused pod's filter judged.
    const std::array<int64_t, 11> integers = {
        static_cast<int64_t>(c.reason), c.unresolvable, c.requested, c.available, c.free_gpus, c.held_gpus,
        c.preferences_satisfied, c.quality_per_mille, c.idle_gpus, c.count, c.topology.has_value()};
    static const TopologyDetail kNone;  // this absl hashes no std::optional
    return H::combine(std::move(h), c.name, integers, c.price, c.held_until.value_or(absl::InfinitePast()),
                      c.topology ? *c.topology : kNone);
  }
};

// What a restart left behind (Kind::kRestart), as the restart collector read it: the reference collector's
// fields (the last termination, the pod's Warning events, the previous container's log tail) and what only
// topofit knows (the pod's GPU ids and their health, the Xid codes). Text is size-capped by the collector.
struct RestartDetail {
  std::string container{};
  int restart_count = 0;
  int exit_code = 0;
  int signal = 0;
  std::string termination_reason{};  // "OOMKilled", "Error", ...
  std::string termination_message{};
  std::string waiting_reason{};       // "CrashLoopBackOff", "ImagePullBackOff", ...
  std::string diagnosis{};            // decision::DiagnoseRestart's reason
  std::vector<std::string> warnings{};  // the pod's Warning events, "Reason: message"
  std::string log_tail{};             // the previous container's last lines
  std::string gpu_ids{};              // topofit.io/gpu-ids of the pod, "" when none
  std::vector<int> unhealthy_gpus{};
  std::vector<int> xids{};
  std::string node_conditions{};             // the node's, as KubeApi::NodeSummary tells them: "Ready=True"
  std::vector<std::string> node_warnings{};  // the node's Warning events, "Reason: message"
  friend bool operator==(const RestartDetail&, const RestartDetail&) = default;
};

// Why the headroom controller changed a shape's warm capacity (Kind::kHeadroom), as it planned it
// (decision::HeadroomPlanner): the shape's object name, the replicas before and after, the target the fill
// rate asked of the rises remembered, and the boot they cover.
struct HeadroomDetail {
  std::string shape{};       // topofit-headroom-<shape>: its CapacityBuffer's (or Deployment's) name
  int replicas = 0;
  int was = 0;
  int target = 0;            // before hysteresis and budget
  double fill_rate = 0;
  int64_t boot_seconds = 0;
  int rises = 0;             // one-minute windows remembered
  int largest_rise = 0;      // the largest rise of them, in pods
  std::string mechanism{};   // "capacity-buffers" or "placeholders"
  friend bool operator==(const HeadroomDetail&, const HeadroomDetail&) = default;
};

// A pod a decision concerns; its ledger uid is its correlation id.
struct PodSubject {
  std::string uid{};
  std::string key{};  // namespace/name
  friend bool operator==(const PodSubject&, const PodSubject&) = default;
};

// One decision. `correlation_id` ties a pod's refusal, preference, the expander's choice, the capacity
// request and the bind together: it is the uid the ledger knows the pod by (decision::LedgerPodUid), which
// the extender, the expander (through a ProvisioningRequest's template) and the replay all see. A ranking or
// an intent concerns several pods: it belongs to each one's chain (`pods`), and its own id is empty.
struct Record {
  int64_t id = 0;  // the store's, in write order; 0 until stored
  absl::Time time{};
  Component component = Component::kExtender;
  Kind kind = Kind::kFilter;
  Reason reason = Reason::kFits;
  std::string correlation_id{};
  std::vector<PodSubject> pods{};
  std::string node{};
  std::string node_group{};
  std::string provisioning_request{};  // namespace/name
  int gpus = 0;                      // GPUs the pod (or the option's pods) asked for
  std::vector<Candidate> candidates{};
  // Filter: the refusals identical to the pod's previous filter record that were folded into it, not
  // recorded, before this one (RefusalAggregator).
  int64_t repeats = 0;
  std::string gang{};  // the gang a gang record is about: decision::GangIdOf, "<source>:<key>"
  std::optional<RestartDetail> restart{};  // a restart record's
  std::optional<HeadroomDetail> headroom{};  // a headroom record's
  friend bool operator==(const Record&, const Record&) = default;
};

}  // namespace topofit::history
