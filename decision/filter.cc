#include "decision/filter.h"

#include "absl/strings/str_cat.h"

namespace topofit::decision {
namespace {

Refusal RefusalOf(const topology::FitResult& result) {
  if (result.insufficient.empty()) return Refusal::kGpuCount;
  switch (result.insufficient.front().kind) {
    case topology::Insufficiency::Kind::kGpuCount:
      return Refusal::kGpuCount;
    case topology::Insufficiency::Kind::kMinLink:
      return Refusal::kMinLink;
    case topology::Insufficiency::Kind::kMinBandwidth:
      return Refusal::kMinBandwidth;
  }
  return Refusal::kGpuCount;
}

}  // namespace

absl::string_view RefusalCode(Refusal refusal) {
  switch (refusal) {
    case Refusal::kNone:
      return "";
    case Refusal::kNodeSize:
      return "node-size";
    case Refusal::kGpuCount:
      return "gpu-count";
    case Refusal::kMinLink:
      return "min-link";
    case Refusal::kMinBandwidth:
      return "min-bandwidth";
    case Refusal::kHeldForScaleUp:
      return "held-for-scale-up";
    case Refusal::kWaitingForCapacity:
      return "waiting-for-capacity";
    case Refusal::kAskingForCapacity:
      return "asking-for-capacity";
  }
  return "";
}

NodeVerdict FilterNode(const GpuDemand& demand, const NodeGpuSnapshot& node) {
  NodeVerdict verdict;
  verdict.requested_gpus = demand.request.gpus;
  if (!demand.wants_gpus()) {
    verdict.fits = true;
    return verdict;
  }
  const topology::Topology& t = *node.topology;
  const topology::AllocationRequest request = EnforcedRequest(demand);
  if (request.gpus > t.gpu_count()) {
    verdict.unresolvable = true;
    verdict.refusal = Refusal::kNodeSize;
    verdict.node_gpus = t.gpu_count();
    return verdict;
  }
  // 0 < request.gpus <= gpu_count and free GPUs on the node: Fit cannot fail on arguments here.
  topology::FitResult now = *topology::Fit(t, node.free(), request);
  if (now.fits()) {
    verdict.fits = true;
    verdict.chosen = now.chosen;
    return verdict;
  }
  // Could evicting pods help? Only if the whole node, emptied, meets the request.
  topology::FitResult empty = *topology::FitEmptyNode(t, request);
  verdict.unresolvable = !empty.fits();
  topology::FitResult& why = verdict.unresolvable ? empty : now;
  verdict.refusal = RefusalOf(why);
  verdict.insufficient = std::move(why.insufficient);
  verdict.best_reachable = why.best_reachable;
  return verdict;
}

std::string ReasonText(const NodeVerdict& verdict, absl::string_view topology_origin) {
  switch (verdict.refusal) {
    case Refusal::kNone:
    case Refusal::kHeldForScaleUp:  // CapacityHolds::ReasonText names the intents
    case Refusal::kWaitingForCapacity:
    case Refusal::kAskingForCapacity:
      return "";
    case Refusal::kNodeSize:
      return absl::StrCat("topofit: needs ", verdict.requested_gpus, " GPUs, node has ", verdict.node_gpus, " (",
                          topology_origin, ")");
    case Refusal::kGpuCount:
    case Refusal::kMinLink:
    case Refusal::kMinBandwidth:
      break;
  }
  topology::FitResult why;
  why.insufficient = verdict.insufficient;
  why.best_reachable = verdict.best_reachable;
  return absl::StrCat("topofit: ", topology::Explain(why), verdict.unresolvable ? " even when empty" : "", " (",
                      topology_origin, ")");
}

}  // namespace topofit::decision
