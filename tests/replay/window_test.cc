#include "replay/window.h"

#include <catch2/catch.hpp>

namespace topofit::sim {
namespace {

// One 8-GPU node at $10/h from 0; a pod holds its 8 GPUs from 1 h to 3 h; the node is removed at 4 h.
std::vector<TimelinePoint> OneNode() {
  return {
      TimelinePoint{0, 8, 0, 1, 1, 10},
      TimelinePoint{1 * kHour, 8, 8, 0, 1, 10},
      TimelinePoint{3 * kHour, 8, 0, 0, 1, 10},
      TimelinePoint{4 * kHour, 0, 0, 0, 0, 0},
  };
}

TEST_CASE("Integrate: the totals over a window, by hand", "[window]") {
  // [0, 4 h): 8 GPUs x 4 h = 32 provisioned, 8 x 2 h = 16 allocated, $10 x 4 h = $40, 4 node-hours.
  const WindowTotals all = Integrate(OneNode(), 0, 4 * kHour);
  CHECK(all.provisioned_gpu_hours == 32);
  CHECK(all.allocated_gpu_hours == 16);
  CHECK(all.cost_dollars == 40);
  CHECK(all.node_hours == 4);
  // [2 h, 3.5 h): 8 x 1.5 = 12 provisioned, 8 x 1 = 8 allocated.
  const WindowTotals middle = Integrate(OneNode(), 2 * kHour, 3 * kHour + 30 * kMinute);
  CHECK(middle.provisioned_gpu_hours == 12);
  CHECK(middle.allocated_gpu_hours == 8);
  CHECK(middle.cost_dollars == 15);
}

TEST_CASE("Integrate: the last point holds after the timeline ends", "[window]") {
  // The replay stopped at 1 h with the node still up and busy: a window to 3 h counts 2 more hours.
  const std::vector<TimelinePoint> all = OneNode();
  const std::vector<TimelinePoint> stopped(all.begin(), all.begin() + 2);
  const WindowTotals totals = Integrate(stopped, 0, 3 * kHour);
  CHECK(totals.provisioned_gpu_hours == 24);
  CHECK(totals.allocated_gpu_hours == 16);
  // Nothing before the first point, nothing in an empty window.
  CHECK(Integrate(OneNode(), 5 * kHour, 5 * kHour).provisioned_gpu_hours == 0);
  CHECK(Integrate({}, 0, kHour).provisioned_gpu_hours == 0);
}

}  // namespace
}  // namespace topofit::sim
