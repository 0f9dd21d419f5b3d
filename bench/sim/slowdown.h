#pragma once

#include <cstdint>

namespace topofit::sim {

// How much longer a multi-GPU pod runs on a set with estimated ring all-reduce bandwidth `set_mbps`
// (topology/set_quality.h) than on the best set of its size it could have had: `best_mbps`, the best
// bandwidth any set of that size reaches on any node group the pod may run on. A share `comm_fraction` of
// its ideal running time is spent in collectives, whose speed is the set's bandwidth; the rest does not
// depend on the set:
//
//   stretch = (1 - comm_fraction) + comm_fraction * best_mbps / set_mbps
//
// So a tensor-parallel job spending 30% of its time in all-reduce that could have had an NVSwitch NV12
// node but lands on PCIe across sockets runs many times longer; one that lands on an NVLink set slightly
// below the best barely notices. 1 for single-GPU pods (best_mbps 0) and for comm_fraction 0.
double Stretch(int64_t best_mbps, int64_t set_mbps, double comm_fraction);

}  // namespace topofit::sim
