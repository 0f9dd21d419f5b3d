#include "decision/scale_down_guard.h"

#include "decision/capacity_ask.h"
#include "decision/filter.h"
#include "topology/allocator.h"

namespace topofit::decision {

bool KeepFromScaleDownDrain(const GpuDemand& demand, const topology::SetQuality& bound) {
  if (!demand.asks_for_topology() || !topology::MeetsLinkAndBandwidth(bound, demand.request)) return false;
  return demand.constraints_required() || MayAskForCapacity(demand);
}

bool AnotherNodeGivesItsTopology(const GpuDemand& demand, const std::vector<const NodeGpuSnapshot*>& others) {
  GpuDemand enforced = demand;
  enforced.policy = TopologyPolicy::kRequired;
  for (const NodeGpuSnapshot* node : others) {
    if (node->topology == nullptr || (node->ours | node->elsewhere).empty()) continue;
    if (FilterNode(enforced, *node).fits) return true;
  }
  return false;
}

}  // namespace topofit::decision
