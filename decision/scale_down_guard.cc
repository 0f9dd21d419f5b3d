#include "decision/scale_down_guard.h"

#include "decision/capacity_ask.h"
#include "decision/filter.h"
#include "decision/filter_memo.h"
#include "topology/allocator.h"

namespace topofit::decision {

bool KeepFromScaleDownDrain(const GpuDemand& demand, const topology::SetQuality& bound) {
  if (!demand.asks_for_topology() || !topology::MeetsLinkAndBandwidth(bound, demand.request)) return false;
  return demand.constraints_required() || MayAskForCapacity(demand);
}

bool AnotherNodeGivesItsTopology(const GpuDemand& demand, const std::vector<const NodeGpuSnapshot*>& others) {
  GpuDemand enforced = demand;
  enforced.policy = TopologyPolicy::kRequired;
  FilterMemo memo;  // nodes of one shape with the same GPUs free are judged once: a cluster has few such
  for (const NodeGpuSnapshot* node : others) {
    if (node->topology == nullptr || (node->ours | node->elsewhere).empty()) continue;
    if (node->free().size() < demand.request.gpus) continue;
    if (memo.Judge(enforced, *node).verdict.fits) return true;
  }
  return false;
}

}  // namespace topofit::decision
