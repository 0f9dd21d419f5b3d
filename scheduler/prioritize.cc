#include "scheduler/prioritize.h"

#include "topology/node_score.h"

namespace topofit::scheduler {

int64_t PrioritizeNode(const GpuDemand& demand, const NodeGpuSnapshot& node) {
  if (!demand.wants_gpus()) return kMinExtenderScore;
  absl::StatusOr<topology::FitResult> fit = topology::Fit(*node.topology, node.free(), EnforcedRequest(demand));
  if (!fit.ok() || !fit->fits()) return kMinExtenderScore;
  const int score = topology::NodeFitScore(*node.topology, *fit->chosen);
  return kMinExtenderScore +
         score * (kMaxExtenderScore - kMinExtenderScore) / (topology::kMaxNodeScore - topology::kMinNodeScore);
}

}  // namespace topofit::scheduler
