#pragma once

// The cluster's totals over a measuring window, integrated from a replay's timeline. Every policy of a
// comparison is measured over the same [0, T] (issue 12), T fixed by the workload (summary.h, WindowOf): a
// policy that finishes its pods sooner still pays for the nodes it keeps until scale-down removes them,
// and is not credited for the hours it did not replay.

#include <vector>

#include "replay/world.h"
#include "replay/workload.h"

namespace topofit::sim {

struct WindowTotals {
  double provisioned_gpu_hours = 0;  // every GPU of every node requested and not removed
  double allocated_gpu_hours = 0;    // held by running pods
  double cost_dollars = 0;           // node price x time
  double node_hours = 0;             // nodes requested and not removed
  double partial_gang_gpu_hours = 0;  // held by members of gangs whose run had not begun
};

// The totals over [from, to) of a timeline in time order, whose last point holds for ever after it (the
// replay stopped because nothing would change any more). Before the first point nothing is counted.
WindowTotals Integrate(const std::vector<TimelinePoint>& timeline, SimTime from, SimTime to);

}  // namespace topofit::sim
