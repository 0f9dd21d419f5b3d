#pragma once

#include <cstdint>

#include "decision/pod_demand.h"

namespace topofit::decision {

// How much longer a multi-GPU pod runs on a set with estimated ring all-reduce bandwidth `set_mbps`
// (topology/set_quality.h) than on the best set of its size it could have had, `best_mbps`. A share
// `comm_fraction` of its ideal running time is spent in collectives, whose speed is the set's bandwidth;
// the rest does not depend on the set:
//
//   stretch = (1 - comm_fraction) + comm_fraction * best_mbps / set_mbps
//
// So a tensor-parallel job spending 30% of its time in all-reduce that could have had an NVSwitch NV12
// node but lands on PCIe across sockets runs many times longer; one that lands on an NVLink set slightly
// below the best barely notices. 1 for single-GPU pods (best_mbps 0) and for comm_fraction 0. The bench's
// replay runs pods this much longer; the expander expects it when it weighs price against topology.
double Stretch(int64_t best_mbps, int64_t set_mbps, double comm_fraction);

// How much of a pod's GPUs counts as useful work when weighing where new capacity goes, given the stretch
// of its set: 1 / stretch². A stretch costs twice: the job burns `stretch` times the GPU-hours (the bill)
// and its owner waits `stretch` times as long for the result (the delay). Counting the bill alone (1 /
// stretch) values the owner's time at nothing: a set that runs a job twice as slow wins at a little under
// half the price per GPU-hour, the job costing the same and finishing twice as late. Weighing both alike,
// their product (as energy-delay weighs a processor's energy against its speed), a slower set wins only
// when it makes the job cheaper by a larger factor than it makes it slower.
double UsefulShare(double stretch);

// The share of run time in collectives topofit assumes for a pod that asks for a topology (min-link or
// min-bandwidth, preferred or required) and says nothing more: data-parallel training and tensor-parallel
// inference on one node spend roughly 10-30% of a step in all-reduce; 0.2 is the middle. A pod that asks
// for no topology is assumed not to care (0): any set serves it alike.
inline constexpr double kAssumedCommFraction = 0.2;

// The comm_fraction topofit assumes for `demand`: kAssumedCommFraction when it asks for a topology and
// wants two GPUs or more, else 0.
double AssumedCommFraction(const GpuDemand& demand);

}  // namespace topofit::decision
