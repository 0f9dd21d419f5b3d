#include "scheduler/filter.h"

#include "absl/strings/str_cat.h"

namespace topofit::scheduler {
namespace {

std::string RefusalLabel(const topology::FitResult& result) {
  if (result.insufficient.empty()) return "unknown";
  switch (result.insufficient.front().kind) {
    case topology::Insufficiency::Kind::kGpuCount:
      return "gpu-count";
    case topology::Insufficiency::Kind::kMinLink:
      return "min-link";
    case topology::Insufficiency::Kind::kMinBandwidth:
      return "min-bandwidth";
  }
  return "unknown";
}

}  // namespace

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
    verdict.refusal = "node-size";
    verdict.reason = absl::StrCat("topofit: needs ", request.gpus, " GPUs, node has ", t.gpu_count(), " (",
                                  node.topology_origin, ")");
    return verdict;
  }
  // 0 < request.gpus <= gpu_count and free GPUs on the node: Fit cannot fail on arguments here.
  const topology::FitResult now = *topology::Fit(t, node.free(), request);
  if (now.fits()) {
    verdict.fits = true;
    verdict.chosen = now.chosen;
    return verdict;
  }
  // Could evicting pods help? Only if the whole node, emptied, meets the request.
  const topology::FitResult empty = *topology::FitEmptyNode(t, request);
  verdict.unresolvable = !empty.fits();
  const topology::FitResult& why = verdict.unresolvable ? empty : now;
  verdict.refusal = RefusalLabel(why);
  verdict.reason = absl::StrCat("topofit: ", topology::Explain(why), verdict.unresolvable ? " even when empty" : "",
                                " (", node.topology_origin, ")");
  return verdict;
}

}  // namespace topofit::scheduler
