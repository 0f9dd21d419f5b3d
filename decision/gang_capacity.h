#pragma once

// Which NVLink domain to ask new capacity in for a gang no domain holds now, and for how many of its
// members: the rule topofit's one best-effort-atomic request per gang follows (docs/gangs.md, "One request
// for the whole gang"). Pure: the caller says what each domain has and can still grow.

#include <optional>
#include <vector>

#include "decision/nvlink_domain.h"

namespace topofit::decision {

// One domain the gang could grow in.
struct GangDomainRoom {
  NvlinkDomain domain;
  int free_members = 0;          // members its free Ready nodes hold now
  int room_nodes = 0;            // nodes it can still grow (its size less the nodes it has)
  int members_per_new_node = 0;  // members an empty node of it holds
};

struct GangCapacityAsk {
  NvlinkDomain domain;
  int new_members = 0;  // members to grow new nodes for
  int new_nodes = 0;
  friend bool operator==(const GangCapacityAsk&, const GangCapacityAsk&) = default;
};

// For `members` members: a domain with room for every member on new nodes, fewest new nodes first (the
// gang does not count on free nodes other pods may take while the new ones boot); else the domain whose
// free nodes leave the fewest new nodes to grow, for the members it lacks; ties by the domain. nullopt
// when no domain can hold the gang even grown to its size.
std::optional<GangCapacityAsk> ChooseGangDomain(int members, const std::vector<GangDomainRoom>& domains);

}  // namespace topofit::decision
