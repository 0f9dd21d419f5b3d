#pragma once

#include <optional>
#include <string>
#include <vector>

#include "decision/capacity_ask.h"
#include "decision/capacity_hold.h"
#include "decision/filter.h"
#include "decision/filter_memo.h"
#include "decision/node_snapshot.h"
#include "decision/pod_demand.h"
#include "decision/preference.h"
#include "kube/objects.h"

namespace topofit::decision {

// One pod's filter cycle, composed once for the extender and the replay: each offered node's verdict
// (JudgeNode), what the verdicts say together about the pod (PodFilterOutcome), and, when no node took
// it, what the pod leaves for the autoscaling side (UnplacedPod). kube-scheduler's own plugins, the
// scoring and the bind stay with the callers; this is the part both must agree on, so the replay's
// records read like a cluster's by construction.

// The extender's verdict on a node for a pod, as filter and bind give it: FilterNode (through `memo`),
// then HoldsAndAskOn.
NodeVerdict JudgeNode(const GpuDemand& demand, const JudgedPod& pod, const NodeGpuSnapshot& node,
                      const CapacityHolds& holds, FilterMemo& memo, const CapacityAsk* ask = nullptr);

// What becomes of `verdict`, the node's verdict on its GPUs alone (FilterNode's, or a claim pod's on its
// claims), once capacity grown for pods is counted: the holds for other pods, the capacity the pod waits
// for itself, then, for a pod no capacity is held for and given its `ask`, whether it asks for capacity
// rather than take this node's poorer set (capacity_ask.h). A hold or an ask refuses a node the pod fits
// as unresolvable: evicting running pods cannot release GPUs held for pods not running yet, nor give a
// better set, so preemption would only harm; the pod retries later.
NodeVerdict HoldsAndAskOn(const GpuDemand& demand, const JudgedPod& pod, const NodeGpuSnapshot& node,
                          const CapacityHolds& holds, NodeVerdict verdict, const CapacityAsk* ask = nullptr);

// A node `pod` fits by its GPUs, refused because capacity is held there for other pods (capacity_hold.h):
// the verdict JudgeNode gives then; nullopt when the holds let it take `gpus` there.
std::optional<NodeVerdict> HeldBack(const JudgedPod& pod, const NodeGpuSnapshot& node, const CapacityHolds& holds,
                                    int gpus);

// The words for any verdict of JudgeNode (its FailedNodes reason).
std::string JudgedReasonText(const NodeVerdict& verdict, const JudgedPod& pod, const NodeGpuSnapshot& node,
                             const CapacityHolds& holds, const CapacityAsk* ask = nullptr);

// What one filter cycle decided about a pod over the nodes it was offered.
struct PodFilterOutcome {
  std::vector<NodeVerdict> verdicts;  // one per node offered, in the order offered
  size_t fitting = 0;                 // how many of them fit
  // Some node was refused by a hold, or because the pod waits for the capacity scaled up for it: capacity
  // is coming, so the pod asks for none of its own.
  bool held_back = false;
  // What a preference of the pod records: kAsked when some node was refused because the pod asks for
  // capacity that gives its preferred set, kEnforced otherwise.
  PreferredSet preferred_set = PreferredSet::kEnforced;

  // Appends a node's verdict, in the order offered, and counts what it says.
  void Add(NodeVerdict verdict);
  bool any_fits() const { return fitting > 0; }
  bool asking_for_capacity() const { return preferred_set == PreferredSet::kAsked; }
};

// JudgeNode for the pod on every node offered, in order, folded into the outcome.
PodFilterOutcome FilterPod(const GpuDemand& demand, const JudgedPod& pod, const std::vector<const NodeGpuSnapshot*>& nodes,
                           const CapacityHolds& holds, FilterMemo& memo, const CapacityAsk* ask = nullptr);

// What a GPU pod that no offered node took leaves behind: its preference for the ledger (what capacity it
// needs, which nodes refused it), and whether it needs a capacity request of its own. CA counts GPUs only:
// it would place the pod on the nodes refused here and never scale up for it — unless a node refused it
// only to hold GPUs for the pods a scale-up was made for (or the pod waits for its own): CA is right that
// the pod fits there once they land, and capacity of its own would strand. No nodes refused it, no request
// either: there is nothing CA would place it on instead.
struct UnplacedPod {
  Preference preference;
  bool needs_capacity_request = false;
};
// Nullopt when the pod fits some node or wants no GPUs. `refused_nodes`: every node that refused it, by name,
// the nodes the filter could not judge included.
std::optional<UnplacedPod> UnplacedAfter(const kube::Pod& pod, const GpuDemand& demand, const PodFilterOutcome& outcome,
                                         std::vector<std::string> refused_nodes);

}  // namespace topofit::decision
