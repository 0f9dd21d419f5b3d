#pragma once

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "decision/gang_capacity.h"
#include "replay/world.h"
#include "topology/gpu_set.h"

namespace topofit::sim {

// Where one pending member of a gang goes.
struct GangMemberPlacement {
  int pod = 0;
  int node = 0;
  topology::GpuSet gpus;
};

// A gang scheduler's answer for the gang's pending members on the Ready nodes now: decision::PlaceGang, the
// function topofit's extender reserves with, over every Ready node the members' class may use. A node offers
// the GPUs its CPU and memory leave room for: members beyond what those hold would not pass kube-scheduler's
// NodeResourcesFit, so the GPUs they would take are reserved away. Members already running keep their
// place; the pending ones are placed as a gang of their own. FailedPrecondition when the gang does not fit
// at the level it requires (or at all); the members then wait.
absl::StatusOr<std::vector<GangMemberPlacement>> PlaceGangMembers(const World& world, int gang);

// What topofit asks CA for when no domain holds the gang now (decision::ChooseGangDomain): each domain's
// free members on its Ready nodes and room left. Only groups that are one domain each are asked for (max
// size at most nodes per domain: an NVL72 rack bought as a node pool), since nothing tells CA which domain
// of a larger group a new node would land in. nullopt when no domain can hold the gang even grown.
std::optional<decision::GangCapacityAsk> GangDomainAskFor(const World& world, int gang);

}  // namespace topofit::sim
