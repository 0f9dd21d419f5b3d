#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "decision/node_snapshot.h"
#include "decision/pod_demand.h"
#include "decision/refusal.h"
#include "topology/allocator.h"

namespace topofit::decision {

// A verdict for one node, mapping straight onto ExtenderFilterResult: fits → the node passes; otherwise
// FailedNodes (`unresolvable` false: evicting pods could free a fitting set, so kube-scheduler may try
// preemption) or FailedAndUnresolvableNodes (`unresolvable` true: the node's shape can never serve the
// pod, or only a hold refuses it, which preemption cannot lift). Quantities only: ReasonText (and
// CapacityHolds::ReasonText for holds) makes the words when a reason is shown.
struct NodeVerdict {
  bool fits = false;
  bool unresolvable = false;
  Refusal refusal = Refusal::kNone;
  int requested_gpus = 0;
  int node_gpus = 0;  // kNodeSize
  // kGpuCount / kMinLink / kMinBandwidth: what fell short, on the node as it is or (unresolvable) even
  // emptied, and the best set of the pod's size it had.
  std::vector<topology::Insufficiency> insufficient;
  std::optional<topology::Allocation> best_reachable;
  // kHeldForScaleUp: GPUs held for other pods against the node's free GPUs, and when the holds stop
  // refusing the pod (capacity_hold.h, JudgedPod: when it becomes late); unset when that never comes (the
  // pod is one the pool holds capacity for) or is unknown (its creation time is).
  int held_gpus = 0;
  int free_gpus = 0;
  std::optional<absl::Time> held_until;
  std::optional<topology::Allocation> chosen;  // the set the pod would get, when it fits
};

// Pods without GPUs fit everywhere (the extender stays neutral). A GPU pod fits when the node's free GPUs
// give it a set that meets its enforced request (pod_demand.h: constraints only under policy `required`).
// A function of the demand and of the node's topology and free GPUs only (not its name, origin or who
// holds what): FilterMemo memoises it on exactly those.
NodeVerdict FilterNode(const GpuDemand& demand, const NodeGpuSnapshot& node);

// The quantities RefusalText tells a verdict's refusal by.
RefusalFacts FactsOf(const NodeVerdict& verdict);

// "topofit: needs links of NV or better, best reachable is PHB even when empty (best set 0,1: ...)
// (catalog:g5)": the words for a verdict of FilterNode, with the node's topology origin. Empty when it
// fits; the refusals of holds and asks add their context (pod_filter.h, FailedNodeText).
std::string ReasonText(const NodeVerdict& verdict, absl::string_view topology_origin);

}  // namespace topofit::decision
