#include "replay/window.h"

#include <algorithm>

namespace topofit::sim {

WindowTotals Integrate(const std::vector<TimelinePoint>& timeline, SimTime from, SimTime to) {
  WindowTotals totals;
  for (size_t i = 0; i < timeline.size(); ++i) {
    const TimelinePoint& point = timeline[i];
    const SimTime begin = std::max(point.at, from);
    const SimTime end = std::min(i + 1 < timeline.size() ? timeline[i + 1].at : to, to);
    if (end <= begin) continue;
    const double hours = static_cast<double>(end - begin) / static_cast<double>(kHour);
    totals.provisioned_gpu_hours += hours * point.provisioned_gpus;
    totals.allocated_gpu_hours += hours * point.allocated_gpus;
    totals.cost_dollars += hours * point.price_per_hour;
    totals.node_hours += hours * point.nodes;
    totals.partial_gang_gpu_hours += hours * point.partial_gang_gpus;
  }
  return totals;
}

}  // namespace topofit::sim
