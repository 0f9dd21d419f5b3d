#include "decision/slowdown.h"

#include <algorithm>

namespace topofit::decision {

double Stretch(int64_t best_mbps, int64_t set_mbps, double comm_fraction) {
  if (best_mbps <= 0 || comm_fraction <= 0) return 1;
  const double c = std::min(comm_fraction, 1.0);
  const double ratio = static_cast<double>(best_mbps) / static_cast<double>(std::max<int64_t>(set_mbps, 1));
  return (1 - c) + c * std::max(ratio, 1.0);
}

double UsefulShare(double stretch) { return 1 / (stretch * stretch); }

double AssumedCommFraction(const GpuDemand& demand) {
  return demand.asks_for_topology() ? kAssumedCommFraction : 0;
}

}  // namespace topofit::decision
