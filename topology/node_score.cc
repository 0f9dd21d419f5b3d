#include "topology/node_score.h"

namespace topofit::topology {
namespace {

constexpr int64_t kWhole = 1000;  // per mille
constexpr int64_t kQualityWeight = 600, kPackingWeight = 250, kCohesionWeight = 150;  // sum 1000

int64_t PerMille(int64_t part, int64_t whole) { return whole <= 0 ? kWhole : part * kWhole / whole; }

}  // namespace

int NodeFitScore(const Topology& topology, const Allocation& allocation, const AllocationRequest& asked) {
  const SetQualityTable& table = topology.quality();
  const int k = allocation.gpus.size();
  const int64_t quality = !MeetsLinkAndBandwidth(allocation.quality, asked) ? 0
                          : k == 1                                          ? kWhole
                                    : PerMille(allocation.quality.bandwidth_mbps, table.BestBandwidth(k));
  const int64_t packing = PerMille(topology.gpu_count() - allocation.leftover.size(), topology.gpu_count());
  const int64_t left = allocation.leftover.size();
  const int64_t cohesion =
      left <= 1 ? kWhole : PerMille(allocation.leftover_cohesion, left * (left - 1) / 2 * table.MaxPairMbps());
  const int64_t weighted = kQualityWeight * quality + kPackingWeight * packing + kCohesionWeight * cohesion;
  return static_cast<int>(weighted * kMaxNodeScore / (kWhole * kWhole));
}

}  // namespace topofit::topology
