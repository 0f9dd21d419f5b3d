#include "decision/prioritize.h"

#include "topology/node_score.h"

namespace topofit::decision {

int64_t PrioritizeScore(const GpuDemand& demand, const NodeVerdict& filtered, const topology::Topology& topology) {
  if (!demand.wants_gpus() || !filtered.fits || !filtered.chosen) return kMinExtenderScore;
  const int score = topology::NodeFitScore(topology, *filtered.chosen, demand.request);
  return kMinExtenderScore +
         score * (kMaxExtenderScore - kMinExtenderScore) / (topology::kMaxNodeScore - topology::kMinNodeScore);
}

int64_t PrioritizeNode(const GpuDemand& demand, const NodeGpuSnapshot& node) {
  return PrioritizeScore(demand, FilterNode(demand, node), *node.topology);
}

}  // namespace topofit::decision
