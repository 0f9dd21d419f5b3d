#pragma once

#include <vector>

#include "replay/workload.h"

namespace topofit::sim {

// The order Workload promises: by arrival, then by name; stable, so equal keys keep their order.
void SortByArrivalThenName(std::vector<PodSpec>& pods);

}  // namespace topofit::sim
