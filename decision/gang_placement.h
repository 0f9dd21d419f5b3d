#pragma once

// Where a whole gang goes: every member at once, inside one node or one multi-node NVLink domain when the
// gang requires it, on the nodes offered now. A pure function over snapshots: the reservation that holds
// the placement until the members bind is gang_book.h. Docs: docs/gangs.md, "All-or-nothing placement".

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "decision/gang.h"
#include "decision/node_snapshot.h"
#include "decision/nvlink_domain.h"
#include "decision/pod_demand.h"
#include "topology/allocator.h"
#include "topology/gpu_set.h"

namespace topofit::decision {

// A node a gang may use: its snapshot, GPUs other gangs have reserved there (not free for this one), and
// the domain its labels name.
struct GangCandidate {
  const NodeGpuSnapshot* node = nullptr;
  topology::GpuSet reserved;
  std::optional<NvlinkDomain> domain;
};

// What a gang asks: `members` pods, each with the demand `member` (a gang's pods share one pod template
// in every source topofit reads, so the first member speaks for all), and the topology its source wants.
struct GangAsk {
  GpuDemand member;
  int members = 0;
  GangTopology topology;
  // The most members one node may hold; 0 for no limit beyond its GPUs. A ComputeDomain's pods take one
  // node each (compute_domain.h).
  int most_per_node = 0;
};

// One member's place: the node and the GPUs it gets there.
struct GangSlotPlacement {
  std::string node;
  topology::GpuSet gpus;
  friend bool operator==(const GangSlotPlacement&, const GangSlotPlacement&) = default;
};

struct GangPlacement {
  // The level the members share: a node, a domain, or nullopt (spread over any nodes offered).
  std::optional<GangLevel> level;
  std::optional<NvlinkDomain> domain;  // when level is kDomain
  std::vector<GangSlotPlacement> slots;  // one per member, grouped by node
  int nodes_used = 0;
};

// The GPU sets successive members get on `free` GPUs of a node, each the best set for `request` on what
// the ones before left (topology::Fit), at most `most` of them: how many members a node holds.
std::vector<topology::GpuSet> MemberSets(const topology::Topology& topology, topology::GpuSet free,
                                         const topology::AllocationRequest& request, int most);

// Places every member, trying the tightest level the gang asks first: the required level when there is
// one (never looser), else the preferred level, then each looser one, then any nodes. Within a level the
// objective is, in order: the fewest nodes, then the fewest free GPUs on the nodes touched (members fill
// nodes already partly used, so whole nodes stay whole for the next gang), then, for a domain, the domain
// with the fewest free GPUs (best fit: large free domains stay whole), then the smallest domain id and
// node names. Exact: the node choice is a knapsack over the nodes' (members they hold, free GPUs) classes.
// Each node holds as many members as successive best sets (topology::Fit of the member's enforced
// request) give it, and at most `most_per_node` when that is set.
//
// Errors: InvalidArgument for fewer than one member, a negative most_per_node or members without GPUs; FailedPrecondition, saying
// what the best domain or node offered holds, when no placement exists at the level required.
absl::StatusOr<GangPlacement> PlaceGang(const GangAsk& ask, const std::vector<GangCandidate>& candidates);

}  // namespace topofit::decision
