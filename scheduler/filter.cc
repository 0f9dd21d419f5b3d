#include "scheduler/filter.h"

#include "absl/strings/str_cat.h"

namespace topofit::scheduler {

NodeVerdict FilterNode(const GpuDemand& demand, const NodeGpuSnapshot& node) {
  NodeVerdict verdict;
  if (!demand.wants_gpus()) {
    verdict.fits = true;
    return verdict;
  }
  const topology::Topology& t = *node.topology;
  const topology::AllocationRequest request = EnforcedRequest(demand);
  if (request.gpus > t.gpu_count()) {
    verdict.unresolvable = true;
    verdict.reason = absl::StrCat("topofit: needs ", request.gpus, " GPUs, node has ", t.gpu_count(), " (",
                                  node.topology_origin, ")");
    return verdict;
  }
  absl::StatusOr<topology::FitResult> now = topology::Fit(t, node.free(), request);
  if (now.ok() && now->fits()) {
    verdict.fits = true;
    verdict.chosen = now->chosen;
    return verdict;
  }
  // Could evicting pods help? Only if the whole node, emptied, meets the request.
  absl::StatusOr<topology::FitResult> empty = topology::FitEmptyNode(t, request);
  verdict.unresolvable = !empty.ok() || !empty->fits();
  const topology::FitResult& why = verdict.unresolvable && empty.ok() ? *empty : *now;
  verdict.reason = absl::StrCat("topofit: ", topology::Explain(why), verdict.unresolvable ? " even when empty" : "",
                                " (", node.topology_origin, ")");
  return verdict;
}

}  // namespace topofit::scheduler
