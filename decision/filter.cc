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

RefusalFacts FactsOf(const NodeVerdict& verdict) {
  RefusalFacts facts{.refusal = verdict.refusal,
                     .unresolvable = verdict.unresolvable,
                     .held_gpus = verdict.held_gpus,
                     .free_gpus = verdict.free_gpus,
                     .held_until = verdict.held_until};
  if (verdict.refusal == Refusal::kNodeSize) {
    facts.requested = verdict.requested_gpus;
    facts.available = verdict.node_gpus;
  } else if (!verdict.insufficient.empty()) {
    facts.requested = verdict.insufficient.front().requested;
    facts.available = verdict.insufficient.front().available;
  }
  return facts;
}

std::string ReasonText(const NodeVerdict& verdict, absl::string_view topology_origin) {
  if (verdict.fits) return "";
  std::string text = absl::StrCat("topofit: ", RefusalText(FactsOf(verdict)));
  if (verdict.best_reachable) absl::StrAppend(&text, " (best set ", topology::AllocationText(*verdict.best_reachable), ")");
  absl::StrAppend(&text, " (", topology_origin, ")");
  return text;
}

}  // namespace topofit::decision
