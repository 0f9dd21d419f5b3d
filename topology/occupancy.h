#pragma once

#include "absl/status/statusor.h"
#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::topology {

// Where to assume that `count` GPUs held by pods topofit did not place sit, among the `free` GPUs it
// otherwise knows of, when nothing says which ones they are: the `count` GPUs whose loss leaves `free`
// least cohesive (lowest SetQualityTable::Cohesion; ties: lowest ids). Decisions made on the rest never
// count on a well-connected block that may already be taken.
//
// InvalidArgument when `free` names GPUs the node does not have or `count` is negative or exceeds it.
absl::StatusOr<GpuSet> PessimisticOccupancy(const Topology& topology, GpuSet free, int count);

}  // namespace topofit::topology
