#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "topology/allocator.h"
#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::topology {

// One node of a multi-node NVLink domain (a GB200 NVL72 rack: 18 nodes of 4 GPUs on one NVLink fabric)
// and its free GPUs.
struct DomainMember {
  const Topology* topology = nullptr;
  GpuSet free;
};

// The GPUs a domain placement takes on one member node.
struct DomainPart {
  size_t member = 0;   // index into the members passed in
  Allocation allocation;
};

struct DomainPlacement {
  std::vector<DomainPart> parts;  // ordered by member index
  int nodes_used() const { return static_cast<int>(parts.size()); }
};

// Places `gpus` GPUs across the members of one NVLink domain. Every GPU of a domain reaches every other
// at full NVLink bandwidth, so what matters is how the placement spreads: the objective is, in order,
// the fewest nodes touched, then the fewest touched nodes left partly free (whole nodes stay whole for
// the next job), then the lowest member indices. Optimal (dynamic programme over members x GPUs placed);
// within each node the GPUs are chosen by the node allocator.
//
// Errors: InvalidArgument for gpus <= 0, a null topology, or members not all in the same domain;
// ResourceExhausted when the domain has fewer free GPUs than asked.
absl::StatusOr<DomainPlacement> PlaceInDomain(const std::vector<DomainMember>& members, int gpus);

}  // namespace topofit::topology
