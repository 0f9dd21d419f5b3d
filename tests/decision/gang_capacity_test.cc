#include "decision/gang_capacity.h"

#include <catch2/catch.hpp>

namespace topofit::decision {
namespace {

NvlinkDomain Clique(const char* id) { return {"nvidia.com/gpu.clique", topology::DomainId{id}}; }

// A rack of `nodes` 4-GPU trays, one member each, of which `live` exist and `free` are free.
GangDomainRoom Rack(const char* id, int live, int free, int nodes = 18) {
  return {.domain = Clique(id), .free_members = free, .room_nodes = nodes - live, .members_per_new_node = 1};
}

TEST_CASE("Gang capacity: new nodes for every member where a domain has room, before counting on free nodes", "[gangs]") {
  // Rack a lacks one member (17 free) but could not take all 18 new; rack b is empty.
  const std::optional<GangCapacityAsk> ask = ChooseGangDomain(18, {Rack("a", 17, 17), Rack("b", 0, 0)});
  REQUIRE(ask);
  CHECK(*ask == GangCapacityAsk{.domain = Clique("b"), .new_members = 18, .new_nodes = 18});
}

TEST_CASE("Gang capacity: among domains with room for all, the fewest new nodes, then the domain", "[gangs]") {
  GangDomainRoom two_per_node = Rack("z", 0, 0);
  two_per_node.members_per_new_node = 2;
  CHECK(ChooseGangDomain(8, {Rack("a", 0, 0), two_per_node})->domain == Clique("z"));
  CHECK(ChooseGangDomain(8, {Rack("c", 2, 0), Rack("b", 4, 1)})->domain == Clique("b"));
}

TEST_CASE("Gang capacity: where no domain has room for all, what the nearest domain lacks", "[gangs]") {
  // 16 members; rack a has 10 nodes, 6 of them free, and room for 8 more (it lacks 10); rack b has 12 nodes,
  // 10 free, and room for 6 (it lacks 6).
  const std::optional<GangCapacityAsk> ask = ChooseGangDomain(16, {Rack("a", 10, 6), Rack("b", 12, 10)});
  REQUIRE(ask);
  CHECK(*ask == GangCapacityAsk{.domain = Clique("b"), .new_members = 6, .new_nodes = 6});
  // One node more in rack b: its room of 5 is below its lack, as rack a's is.
  CHECK_FALSE(ChooseGangDomain(16, {Rack("a", 10, 6), Rack("b", 13, 10)}));
}

TEST_CASE("Gang capacity: a domain whose new nodes hold no member is never asked for", "[gangs]") {
  GangDomainRoom too_small = Rack("a", 0, 0);
  too_small.members_per_new_node = 0;
  CHECK_FALSE(ChooseGangDomain(2, {too_small}));
  CHECK_FALSE(ChooseGangDomain(2, {}));
}

}  // namespace
}  // namespace topofit::decision
