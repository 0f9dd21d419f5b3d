#include "decision/gang_placement.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "topology/allocator.h"

namespace topofit::decision {
namespace {

// What one node can give the gang: the members' GPU sets, chosen one after another on what is free and
// not reserved for another gang.
struct NodeRoom {
  const GangCandidate* candidate = nullptr;
  std::vector<topology::GpuSet> sets;
  int free_gpus = 0;
  int holds() const { return static_cast<int>(sets.size()); }
  const std::string& name() const { return candidate->node->node; }
};

// The member sets of a (topology, free GPUs) pair, worked out once per call: a fleet of one shape has few
// distinct pairs (an empty 64-rack NVL72 fleet: one), and MemberSets was most of PlaceGang's time there.
using MemberSetsMemo = std::map<std::pair<const topology::Topology*, uint32_t>, std::vector<topology::GpuSet>>;

NodeRoom RoomOn(const GangCandidate& candidate, const topology::AllocationRequest& request, int members,
                MemberSetsMemo& memo) {
  const topology::GpuSet free = candidate.node->free().without(candidate.reserved);
  auto [sets, fresh] = memo.try_emplace({candidate.node->topology.get(), free.mask()});
  if (fresh) sets->second = MemberSets(*candidate.node->topology, free, request, members);
  return NodeRoom{.candidate = &candidate, .sets = sets->second, .free_gpus = free.size()};
}

// The nodes one unit (a node, a domain, or every node) would use, and what the objective weighs.
struct Selection {
  std::vector<const NodeRoom*> nodes;  // by name
  int touched_free = 0;                // free GPUs on the nodes used, before the gang
  int unit_free = 0;                   // free GPUs in the whole unit
  auto Key() const { return std::make_tuple(static_cast<int>(nodes.size()), touched_free, unit_free); }
};

// The fewest nodes of `rooms` holding `members`, and among those the fewest free GPUs touched: a bounded
// knapsack over the classes of nodes alike in (members held, free GPUs), whose nodes are taken by name.
// nullopt when all of them together hold fewer.
std::optional<Selection> ChooseNodes(std::vector<const NodeRoom*> rooms, int members) {
  Selection selection;
  for (const NodeRoom* room : rooms) selection.unit_free += room->free_gpus;
  std::erase_if(rooms, [](const NodeRoom* room) { return room->holds() == 0; });
  std::sort(rooms.begin(), rooms.end(), [](const NodeRoom* a, const NodeRoom* b) {
    return std::make_tuple(-a->holds(), a->name()) < std::make_tuple(-b->holds(), b->name());
  });
  // The fewest nodes: the largest rooms first.
  int fewest = 0;
  for (int held = 0; fewest < static_cast<int>(rooms.size()) && held < members; ++fewest) held += rooms[fewest]->holds();
  int total = 0;
  for (const NodeRoom* room : rooms) total += room->holds();
  if (total < members) return std::nullopt;

  std::map<std::pair<int, int>, std::vector<const NodeRoom*>> classes;  // (holds, free) -> rooms by name
  for (const NodeRoom* room : rooms) classes[{room->holds(), room->free_gpus}].push_back(room);
  for (auto& [shape, alike] : classes) {
    std::sort(alike.begin(), alike.end(), [](const NodeRoom* a, const NodeRoom* b) { return a->name() < b->name(); });
  }
  // best[j][s]: the fewest free GPUs touched by j nodes holding s members (capped at `members`). Per
  // class, each state remembers how many of the class's nodes it took and the state it came from.
  constexpr int kNone = std::numeric_limits<int>::max();
  const int width = members + 1;
  const auto index = [width](int j, int s) { return static_cast<size_t>(j) * width + s; };
  std::vector<int> best(static_cast<size_t>(fewest + 1) * width, kNone);
  best[index(0, 0)] = 0;
  struct Step {
    std::vector<int> took;
    std::vector<int> from_s;
  };
  std::vector<Step> steps;
  for (const auto& [shape, alike] : classes) {
    const auto [holds, free] = shape;
    std::vector<int> next(best.size(), kNone);
    Step& step = steps.emplace_back(Step{std::vector<int>(best.size(), 0), std::vector<int>(best.size(), 0)});
    for (int j = 0; j <= fewest; ++j) {
      for (int s = 0; s <= members; ++s) {
        if (best[index(j, s)] == kNone) continue;
        const int most = std::min(static_cast<int>(alike.size()), fewest - j);
        for (int t = 0; t <= most; ++t) {
          const size_t to = index(j + t, std::min(members, s + t * holds));
          const int cost = best[index(j, s)] + t * free;
          if (cost < next[to]) {
            next[to] = cost;
            step.took[to] = t;
            step.from_s[to] = s;
          }
        }
      }
    }
    best = std::move(next);
  }
  // `fewest` nodes reach `members` by construction of `fewest`.
  selection.touched_free = best[index(fewest, members)];
  int j = fewest;
  int s = members;
  size_t c = steps.size();
  for (auto it = classes.rbegin(); it != classes.rend(); ++it) {
    const Step& step = steps[--c];
    const int t = step.took[index(j, s)];
    selection.nodes.insert(selection.nodes.end(), it->second.begin(), it->second.begin() + t);
    s = step.from_s[index(j, s)];
    j -= t;
  }
  std::sort(selection.nodes.begin(), selection.nodes.end(),
            [](const NodeRoom* a, const NodeRoom* b) { return a->name() < b->name(); });
  return selection;
}

// The levels to try, tightest first: the required one alone, else from the preferred one outwards.
absl::StatusOr<std::vector<std::optional<GangLevel>>> LevelsToTry(const GangTopology& topology) {
  if (topology.required) {
    if (!topology.required->level) {
      return absl::InvalidArgumentError(absl::StrCat(topology.required->annotation, "=", topology.required->value,
                                                     ": ", topology.required->not_understood));
    }
    return std::vector<std::optional<GangLevel>>{*topology.required->level};
  }
  const std::optional<GangLevel> preferred = topology.preferred ? topology.preferred->level : std::nullopt;
  if (preferred == GangLevel::kNode) return std::vector<std::optional<GangLevel>>{GangLevel::kNode, GangLevel::kDomain, std::nullopt};
  if (preferred == GangLevel::kDomain) return std::vector<std::optional<GangLevel>>{GangLevel::kDomain, std::nullopt};
  return std::vector<std::optional<GangLevel>>{std::nullopt};
}

// The units a level places a gang in: each node, each domain, or all nodes together; in the order that
// breaks the objective's ties (node name, domain).
struct Unit {
  std::optional<NvlinkDomain> domain;
  std::string node;  // kNode
  std::vector<const NodeRoom*> rooms;
};
std::vector<Unit> UnitsOf(std::optional<GangLevel> level, const std::vector<NodeRoom>& rooms) {
  std::vector<Unit> units;
  if (!level) {
    Unit all;
    for (const NodeRoom& room : rooms) all.rooms.push_back(&room);
    units.push_back(std::move(all));
  } else if (*level == GangLevel::kNode) {
    for (const NodeRoom& room : rooms) units.push_back(Unit{.domain = std::nullopt, .node = room.name(), .rooms = {&room}});
    std::sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.node < b.node; });
  } else {
    std::map<NvlinkDomain, std::vector<const NodeRoom*>> domains;
    for (const NodeRoom& room : rooms) {
      if (room.candidate->domain) domains[*room.candidate->domain].push_back(&room);
    }
    for (auto& [domain, members] : domains) units.push_back(Unit{.domain = domain, .node = {}, .rooms = std::move(members)});
  }
  return units;
}

int MembersHeld(const Unit& unit, int members) {
  int held = 0;
  for (const NodeRoom* room : unit.rooms) held += room->holds();
  return std::min(held, members);
}

// Why no unit of the required level holds the gang: what the best one holds.
absl::Status NoRoom(std::optional<GangLevel> level, const std::vector<Unit>& units, const GangAsk& ask,
                    size_t nodes_offered) {
  const std::string gang = absl::StrCat(ask.members, " members of ", ask.member.request.gpus, " GPUs");
  if (!level) {
    return absl::FailedPreconditionError(absl::StrCat("the ", nodes_offered, " nodes offered hold ",
                                                      units.empty() ? 0 : MembersHeld(units.front(), ask.members),
                                                      " of ", gang));
  }
  const char* what = *level == GangLevel::kNode ? "node" : "NVLink domain";
  if (units.empty()) {
    return absl::FailedPreconditionError(
        *level == GangLevel::kNode
            ? std::string("no node offered")
            : absl::StrCat("none of the ", nodes_offered, " nodes offered carries an NVLink domain label"));
  }
  const Unit* most = &units.front();
  for (const Unit& unit : units) {
    if (MembersHeld(unit, ask.members) > MembersHeld(*most, ask.members)) most = &unit;
  }
  const std::string where = *level == GangLevel::kNode
                                ? absl::StrCat("node ", most->node)
                                : absl::StrCat("domain ", most->domain->label_key, "=", most->domain->id.value);
  return absl::FailedPreconditionError(absl::StrCat("no ", what, " offered holds all ", gang, " (the most one holds is ",
                                                    MembersHeld(*most, ask.members), ", in ", where, ")"));
}

GangPlacement PlacementOf(std::optional<GangLevel> level, const Unit& unit, const Selection& selection, int members) {
  GangPlacement placement{.level = level, .domain = unit.domain, .slots = {},
                          .nodes_used = static_cast<int>(selection.nodes.size())};
  for (const NodeRoom* room : selection.nodes) {
    for (const topology::GpuSet& gpus : room->sets) {
      if (static_cast<int>(placement.slots.size()) == members) break;
      placement.slots.push_back(GangSlotPlacement{room->name(), gpus});
    }
  }
  return placement;
}

}  // namespace

std::vector<topology::GpuSet> MemberSets(const topology::Topology& topology, topology::GpuSet free,
                                         const topology::AllocationRequest& request, int most) {
  std::vector<topology::GpuSet> sets;
  if (request.gpus <= 0 || request.gpus > topology.gpu_count()) return sets;
  while (static_cast<int>(sets.size()) < most) {
    absl::StatusOr<topology::FitResult> fit = topology::Fit(topology, free, request);
    if (!fit.ok() || !fit->fits()) break;
    sets.push_back(fit->chosen->gpus);
    free = free.without(fit->chosen->gpus);
  }
  return sets;
}

absl::StatusOr<GangPlacement> PlaceGang(const GangAsk& ask, const std::vector<GangCandidate>& candidates) {
  if (ask.members < 1) return absl::InvalidArgumentError(absl::StrCat("a gang of ", ask.members, " members"));
  if (ask.most_per_node < 0) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", ask.most_per_node, " members per node"));
  }
  if (!ask.member.wants_gpus()) return absl::InvalidArgumentError("a gang whose members ask for no GPUs");
  absl::StatusOr<std::vector<std::optional<GangLevel>>> levels = LevelsToTry(ask.topology);
  if (!levels.ok()) return levels.status();

  const topology::AllocationRequest request = EnforcedRequest(ask.member);
  std::vector<NodeRoom> rooms;
  rooms.reserve(candidates.size());
  MemberSetsMemo memo;
  const int per_node = ask.most_per_node > 0 ? std::min(ask.members, ask.most_per_node) : ask.members;
  for (const GangCandidate& candidate : candidates) rooms.push_back(RoomOn(candidate, request, per_node, memo));

  absl::Status last = absl::OkStatus();
  for (const std::optional<GangLevel>& level : *levels) {
    const std::vector<Unit> units = UnitsOf(level, rooms);
    const Unit* best_unit = nullptr;
    std::optional<Selection> best;
    for (const Unit& unit : units) {
      std::optional<Selection> selection = ChooseNodes(unit.rooms, ask.members);
      if (selection && (!best || selection->Key() < best->Key())) {
        best = std::move(selection);
        best_unit = &unit;
      }
    }
    if (best) return PlacementOf(level, *best_unit, *best, ask.members);
    last = NoRoom(level, units, ask, candidates.size());
  }
  return last;
}

}  // namespace topofit::decision
