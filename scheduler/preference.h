#pragma once

#include <string>
#include <vector>

#include "kube/objects.h"
#include "ledger/ledger.h"
#include "scheduler/pod_demand.h"

namespace topofit::scheduler {

// The ledger preference of a GPU pod that no offered node could serve at its enforced request: what
// capacity it needs (GPU count, min link and bandwidth, the node selector and affinity that constrain
// its product) and which nodes refused it. Times are left for the ledger to set. One function for the
// extender and the bench's replay of it.
ledger::Preference PreferenceFor(const kube::Pod& pod, const GpuDemand& demand,
                                 std::vector<std::string> refused_nodes);

}  // namespace topofit::scheduler
