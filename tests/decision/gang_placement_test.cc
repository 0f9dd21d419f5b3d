#include "decision/gang_placement.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "topology/catalog.h"

namespace topofit::decision {
namespace {

constexpr const char* kClique = "nvidia.com/gpu.clique";

std::shared_ptr<const topology::Topology> Shape(const char* name) {
  absl::StatusOr<topology::Topology> shape = topology::CatalogShape(name);
  REQUIRE(shape.ok());
  return std::make_shared<const topology::Topology>(*std::move(shape));
}

// Nodes for a test: snapshots kept alive by the fleet, offered as candidates.
class Fleet {
 public:
  // A node of `shape` whose `busy` GPUs other pods hold, in `domain` (none when empty).
  Fleet& Node(const std::string& name, const char* shape, topology::GpuSet busy, const std::string& domain,
              topology::GpuSet reserved = {}) {
    auto snapshot = std::make_shared<NodeGpuSnapshot>();
    snapshot->node = name;
    snapshot->topology = Shape(shape);
    snapshot->origin = std::make_shared<const NodeOrigin>();
    snapshot->elsewhere = busy;
    snapshots_.push_back(snapshot);
    GangCandidate candidate{.node = snapshot.get(), .reserved = reserved, .domain = std::nullopt};
    if (!domain.empty()) candidate.domain = NvlinkDomain{kClique, {domain}};
    candidates_.push_back(candidate);
    return *this;
  }
  // `count` idle GB200 trays named <domain>-<i>.
  Fleet& Rack(const std::string& domain, int count) {
    for (int i = 0; i < count; ++i) Node(absl::StrCat(domain, "-", 10 + i), "gb200-nvl72-node", {}, domain);
    return *this;
  }
  const std::vector<GangCandidate>& candidates() const { return candidates_; }

 private:
  std::vector<std::shared_ptr<NodeGpuSnapshot>> snapshots_;
  std::vector<GangCandidate> candidates_;
};

GangAsk Ask(int members, int gpus, std::optional<GangLevel> required = std::nullopt,
            std::optional<GangLevel> preferred = std::nullopt) {
  GangAsk ask;
  ask.members = members;
  ask.member.request.gpus = gpus;
  const auto constraint = [](GangLevel level) {
    return GangTopologyConstraint{.annotation = "topofit.io/gang-required-topology", .value = "x", .level = level,
                                  .not_understood = {}};
  };
  if (required) ask.topology.required = constraint(*required);
  if (preferred) ask.topology.preferred = constraint(*preferred);
  return ask;
}

std::map<std::string, int> MembersByNode(const GangPlacement& placement) {
  std::map<std::string, int> by_node;
  for (const GangSlotPlacement& slot : placement.slots) ++by_node[slot.node];
  return by_node;
}

TEST_CASE("PlaceGang puts a required-domain gang in one NVLink domain, whole nodes first", "[gang_placement]") {
  Fleet fleet;
  fleet.Rack("rack-a", 10).Rack("rack-b", 18);
  // 16 members x 4 GPUs: only rack-b holds them all
  absl::StatusOr<GangPlacement> placed = PlaceGang(Ask(16, 4, GangLevel::kDomain), fleet.candidates());
  REQUIRE(placed.ok());
  CHECK(placed->level == GangLevel::kDomain);
  REQUIRE(placed->domain.has_value());
  CHECK(placed->domain->id.value == "rack-b");
  CHECK(placed->nodes_used == 16);
  REQUIRE(placed->slots.size() == 16);
  for (const GangSlotPlacement& slot : placed->slots) {
    CHECK(slot.node.rfind("rack-b-", 0) == 0);
    CHECK(slot.gpus == topology::GpuSet::FirstN(4));
  }
  // the lowest names: rack-b-10 .. rack-b-25
  CHECK(placed->slots.front().node == "rack-b-10");
  CHECK(placed->slots.back().node == "rack-b-25");
}

TEST_CASE("PlaceGang picks the domain that fits most tightly, so large free domains stay whole", "[gang_placement]") {
  Fleet fleet;
  fleet.Rack("rack-a", 18).Rack("rack-b", 9);
  absl::StatusOr<GangPlacement> placed = PlaceGang(Ask(8, 4, GangLevel::kDomain), fleet.candidates());
  REQUIRE(placed.ok());
  CHECK(placed->domain->id.value == "rack-b");
}

TEST_CASE("PlaceGang fills partly used nodes before whole ones", "[gang_placement]") {
  Fleet fleet;
  // 2-GPU members on 4-GPU trays: two trays have 2 GPUs busy, two are idle
  fleet.Node("a", "gb200-nvl72-node", {}, "r")
      .Node("b", "gb200-nvl72-node", topology::GpuSet::FromMask(0b0011), "r")
      .Node("c", "gb200-nvl72-node", {}, "r")
      .Node("d", "gb200-nvl72-node", topology::GpuSet::FromMask(0b1100), "r");
  // three members need two nodes: one idle tray (2 members) and one half-used (1 member)
  absl::StatusOr<GangPlacement> placed = PlaceGang(Ask(3, 2, GangLevel::kDomain), fleet.candidates());
  REQUIRE(placed.ok());
  CHECK(placed->nodes_used == 2);
  CHECK(MembersByNode(*placed) == std::map<std::string, int>{{"a", 2}, {"b", 1}});
  CHECK(placed->slots[2].gpus == topology::GpuSet::FromMask(0b1100));
}

TEST_CASE("PlaceGang with one member per node spreads a ComputeDomain's pods over trays", "[gang_placement]") {
  Fleet fleet;
  fleet.Rack("r", 3);
  GangAsk ask = Ask(3, 1, GangLevel::kDomain);
  ask.most_per_node = 1;
  absl::StatusOr<GangPlacement> placed = PlaceGang(ask, fleet.candidates());
  REQUIRE(placed.ok());
  CHECK(MembersByNode(*placed) == std::map<std::string, int>{{"r-10", 1}, {"r-11", 1}, {"r-12", 1}});
  ask.members = 4;  // without the limit one tray would hold all four
  CHECK(absl::IsFailedPrecondition(PlaceGang(ask, fleet.candidates()).status()));
}

TEST_CASE("PlaceGang never uses GPUs another gang reserved", "[gang_placement]") {
  Fleet fleet;
  fleet.Node("a", "gb200-nvl72-node", {}, "r", topology::GpuSet::FromMask(0b1111))
      .Node("b", "gb200-nvl72-node", {}, "r", topology::GpuSet::FromMask(0b0011))
      .Node("c", "gb200-nvl72-node", {}, "r");
  absl::StatusOr<GangPlacement> placed = PlaceGang(Ask(3, 2, GangLevel::kDomain), fleet.candidates());
  REQUIRE(placed.ok());
  CHECK(MembersByNode(*placed) == std::map<std::string, int>{{"b", 1}, {"c", 2}});
  CHECK(placed->slots[0].gpus == topology::GpuSet::FromMask(0b1100));

  const absl::StatusOr<GangPlacement> more = PlaceGang(Ask(4, 2, GangLevel::kDomain), fleet.candidates());
  CHECK(absl::IsFailedPrecondition(more.status()));
  CHECK(more.status().message() ==
        "no NVLink domain offered holds all 4 members of 2 GPUs (the most one holds is 3, in domain "
        "nvidia.com/gpu.clique=r)");
}

TEST_CASE("PlaceGang at the node level keeps every member on one node", "[gang_placement]") {
  Fleet fleet;
  fleet.Node("small", "hgx-h100", topology::GpuSet::FromMask(0b11110000), "")
      .Node("whole", "hgx-h100", {}, "")
      .Node("tight", "hgx-h100", topology::GpuSet::FromMask(0b11000000), "");
  absl::StatusOr<GangPlacement> placed = PlaceGang(Ask(3, 2, GangLevel::kNode), fleet.candidates());
  REQUIRE(placed.ok());
  // 6 free GPUs on "tight" hold the three members; "whole" would leave 2 of 8 free
  CHECK(MembersByNode(*placed) == std::map<std::string, int>{{"tight", 3}});
  const absl::StatusOr<GangPlacement> too_many = PlaceGang(Ask(5, 2, GangLevel::kNode), fleet.candidates());
  CHECK(too_many.status().message() ==
        "no node offered holds all 5 members of 2 GPUs (the most one holds is 4, in node whole)");
}

TEST_CASE("PlaceGang with a preferred level falls back to looser ones, a required one never", "[gang_placement]") {
  Fleet fleet;
  fleet.Rack("rack-a", 2).Rack("rack-b", 2);
  // 3 trays' worth: no single rack holds it
  const absl::StatusOr<GangPlacement> required = PlaceGang(Ask(3, 4, GangLevel::kDomain), fleet.candidates());
  CHECK(absl::IsFailedPrecondition(required.status()));
  absl::StatusOr<GangPlacement> preferred = PlaceGang(Ask(3, 4, std::nullopt, GangLevel::kDomain), fleet.candidates());
  REQUIRE(preferred.ok());
  CHECK_FALSE(preferred->level.has_value());
  CHECK(preferred->nodes_used == 3);
  const absl::StatusOr<GangPlacement> none = PlaceGang(Ask(5, 4, std::nullopt, GangLevel::kDomain), fleet.candidates());
  CHECK(none.status().message() == "the 4 nodes offered hold 4 of 5 members of 4 GPUs");
}

TEST_CASE("PlaceGang refuses what is not a gang and a level it does not know", "[gang_placement]") {
  Fleet fleet;
  fleet.Rack("rack-a", 2);
  CHECK(absl::IsInvalidArgument(PlaceGang(Ask(0, 4), fleet.candidates()).status()));
  CHECK(absl::IsInvalidArgument(PlaceGang(Ask(2, 0), fleet.candidates()).status()));
  GangAsk negative = Ask(2, 4);
  negative.most_per_node = -1;
  CHECK(absl::IsInvalidArgument(PlaceGang(negative, fleet.candidates()).status()));
  GangAsk rack = Ask(2, 4);
  rack.topology.required = GangTopologyConstraint{.annotation = "kueue.x-k8s.io/podset-required-topology",
                                                  .value = "cloud.example.com/rack",
                                                  .level = std::nullopt,
                                                  .not_understood = "not an NVLink domain label"};
  const absl::StatusOr<GangPlacement> refused = PlaceGang(rack, fleet.candidates());
  CHECK(refused.status().message() ==
        "kueue.x-k8s.io/podset-required-topology=cloud.example.com/rack: not an NVLink domain label");
}

// Brute force over every subset of every domain: the fewest nodes, then the fewest free GPUs touched, then
// the tightest domain. Members per node as successive best sets give them (the same rule as PlaceGang's),
// at most most_per_node when the ask sets it.
TEST_CASE("PlaceGang's domain choice is optimal against brute force", "[gang_placement]") {
  std::mt19937 rng(20261205);
  const char* shapes[] = {"gb200-nvl72-node", "hgx-h100"};
  for (int trial = 0; trial < 300; ++trial) {
    Fleet fleet;
    const int nodes = 1 + static_cast<int>(rng() % 7);
    const char* shape = shapes[rng() % 2];
    const int node_gpus = std::string(shape) == "hgx-h100" ? 8 : 4;
    std::vector<std::pair<std::string, topology::GpuSet>> free_of;  // by candidate
    for (int i = 0; i < nodes; ++i) {
      const topology::GpuSet busy = topology::GpuSet::FromMask(rng() & ((1u << node_gpus) - 1));
      fleet.Node(absl::StrCat("n", i), shape, busy, absl::StrCat("d", rng() % 2));
    }
    const int gpus = 1 + static_cast<int>(rng() % 4);
    const int members = 1 + static_cast<int>(rng() % 8);
    GangAsk ask = Ask(members, gpus, GangLevel::kDomain);
    ask.most_per_node = static_cast<int>(rng() % 3);  // 0: no limit
    const int per_node = ask.most_per_node > 0 ? ask.most_per_node : members;

    // Each node's members and free GPUs, by successive topology::Fit as documented.
    std::vector<int> holds;
    std::vector<int> free_gpus;
    for (const GangCandidate& candidate : fleet.candidates()) {
      topology::GpuSet free = candidate.node->free();
      free_gpus.push_back(free.size());
      int held = 0;
      while (held < std::min(members, per_node)) {
        absl::StatusOr<topology::FitResult> fit = topology::Fit(*candidate.node->topology, free, EnforcedRequest(ask.member));
        if (!fit.ok() || !fit->fits()) break;
        free = free.without(fit->chosen->gpus);
        ++held;
      }
      holds.push_back(held);
    }
    std::optional<std::tuple<int, int, int>> brute;
    for (uint32_t subset = 1; subset < (1u << nodes); ++subset) {
      std::set<std::string> domains;
      int held = 0;
      int touched = 0;
      for (int i = 0; i < nodes; ++i) {
        if (!((subset >> i) & 1)) continue;
        domains.insert(fleet.candidates()[i].domain->id.value);
        held += holds[i];
        touched += free_gpus[i];
      }
      if (domains.size() != 1 || held < members) continue;
      int unit_free = 0;
      for (int i = 0; i < nodes; ++i) {
        if (fleet.candidates()[i].domain->id.value == *domains.begin()) unit_free += free_gpus[i];
      }
      const auto key = std::make_tuple(std::popcount(subset), touched, unit_free);
      if (!brute || key < *brute) brute = key;
    }
    absl::StatusOr<GangPlacement> placed = PlaceGang(ask, fleet.candidates());
    INFO("trial " << trial << ": " << nodes << " " << shape << " nodes, " << members << " x " << gpus
                  << " GPUs, at most " << ask.most_per_node << " per node");
    REQUIRE(placed.ok() == brute.has_value());
    if (!brute) continue;
    int touched = 0;
    int unit_free = 0;
    std::set<std::string> used;
    for (const GangSlotPlacement& slot : placed->slots) used.insert(slot.node);
    for (size_t i = 0; i < fleet.candidates().size(); ++i) {
      const GangCandidate& candidate = fleet.candidates()[i];
      if (used.contains(candidate.node->node)) touched += free_gpus[i];
      if (candidate.domain == placed->domain) unit_free += free_gpus[i];
    }
    CHECK(std::make_tuple(placed->nodes_used, touched, unit_free) == *brute);
    CHECK(static_cast<int>(placed->slots.size()) == members);
    CHECK(static_cast<int>(used.size()) == placed->nodes_used);
    for (const auto& [node, held] : MembersByNode(*placed)) CHECK(held <= per_node);
    // no GPU given twice, none busy
    std::map<std::string, topology::GpuSet> given;
    for (const GangSlotPlacement& slot : placed->slots) {
      CHECK(slot.gpus.size() == gpus);
      CHECK((given[slot.node] & slot.gpus).empty());
      given[slot.node] = given[slot.node] | slot.gpus;
    }
    for (const GangCandidate& candidate : fleet.candidates()) {
      CHECK((given[candidate.node->node] & candidate.node->elsewhere).empty());
    }
  }
}

}  // namespace
}  // namespace topofit::decision
