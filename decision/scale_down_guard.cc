#include "decision/scale_down_guard.h"

#include "decision/capacity_ask.h"
#include "decision/filter.h"
#include "topology/allocator.h"

namespace topofit::decision {

bool KeepFromScaleDownDrain(const GpuDemand& demand, const topology::SetQuality& bound) {
  if (!demand.asks_for_topology() || !topology::MeetsLinkAndBandwidth(bound, demand.request)) return false;
  return demand.constraints_required() || MayAskForCapacity(demand);
}

bool AnotherNodeGivesItsTopology(const GpuDemand& demand, absl::string_view own_node,
                                 const std::vector<const NodeGpuSnapshot*>& nodes, FilterMemo& memo) {
  GpuDemand enforced = demand;
  enforced.policy = TopologyPolicy::kRequired;
  for (const NodeGpuSnapshot* node : nodes) {
    if (node->node == own_node || node->topology == nullptr || (node->ours | node->elsewhere).empty()) continue;
    if (node->free().size() < demand.request.gpus) continue;
    if (memo.FilterAndScore(enforced, *node).verdict.fits) return true;
  }
  return false;
}

}  // namespace topofit::decision
