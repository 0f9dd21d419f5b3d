#pragma once

#include <optional>
#include <string>

#include "scheduler/gpu_state.h"
#include "scheduler/pod_demand.h"
#include "topology/allocator.h"

namespace topofit::scheduler {

// A filter verdict for one node, mapping straight onto ExtenderFilterResult: fits → the node passes;
// otherwise FailedNodes (`unresolvable` false: evicting pods could free a fitting set, so kube-scheduler
// may try preemption) or FailedAndUnresolvableNodes (`unresolvable` true: the node's shape can never
// serve the pod).
struct NodeVerdict {
  bool fits = false;
  bool unresolvable = false;
  std::string reason;                          // empty when it fits
  // A short label for metrics: "gpu-count", "min-link", "min-bandwidth" (the first unmet part of the
  // request) or "node-size" (fewer GPUs than the pod wants); empty when it fits.
  std::string refusal;
  std::optional<topology::Allocation> chosen;  // the set the pod would get
};

// Pods without GPUs fit everywhere (the extender stays neutral). A GPU pod fits when the node's free GPUs
// give it a set that meets its enforced request (pod_demand.h: constraints only under policy `required`).
// A function of the demand and of the node's topology, origin and free GPUs only (not its name or who holds
// what): the expander's ranking memoises it on exactly those (expander/rank.cc).
NodeVerdict FilterNode(const GpuDemand& demand, const NodeGpuSnapshot& node);

}  // namespace topofit::scheduler
