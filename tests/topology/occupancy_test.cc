#include "topology/occupancy.h"

#include <random>

#include <catch2/catch.hpp>

#include "tests/topology/test_topologies.h"

namespace topofit::topology {
namespace {

using testing::kPcieSplitRows;
using testing::MakeTopology;
using testing::Set;

TEST_CASE("pessimistic occupancy breaks the most cohesive block", "[occupancy]") {
  const Topology pcie = MakeTopology(kPcieSplitRows, "NVIDIA-A10G");
  // Free {0,1,4,5,6}; one GPU held elsewhere. Losing 4 leaves {0,1,5,6}: PHB pairs 0-1, 5-6 (2 x 20)
  // + SYS 4 x 10 = 80 GB/s; losing 0 leaves {1,4,5,6}: PHB 3 x 20 + SYS 3 x 10 = 90. So assume GPU4.
  CHECK(*PessimisticOccupancy(pcie, Set({0, 1, 4, 5, 6}), 1) == Set({4}));
  CHECK(PessimisticOccupancy(pcie, Set({0, 1}), 0)->empty());
  CHECK(*PessimisticOccupancy(pcie, Set({0, 1}), 2) == Set({0, 1}));
  CHECK(PessimisticOccupancy(pcie, Set({0, 1}), 3).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(PessimisticOccupancy(pcie, Set({0, 1}), -1).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(PessimisticOccupancy(pcie, GpuSet::FromMask(0x100), 1).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("pessimistic occupancy is the brute-force least cohesive leftover", "[occupancy][property]") {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 300; ++trial) {
    const Topology t = testing::RandomServer(2 + trial % 11, rng);
    const GpuSet free = GpuSet::FromMask(std::uniform_int_distribution<uint32_t>(0, (1u << t.gpu_count()) - 1)(rng));
    const int count = std::uniform_int_distribution<int>(0, free.size())(rng);
    const GpuSet taken = *PessimisticOccupancy(t, free, count);
    REQUIRE(taken.size() == count);
    REQUIRE(free.contains(taken));
    for (uint32_t mask = 0; mask < (1u << t.gpu_count()); ++mask) {
      const GpuSet other = GpuSet::FromMask(mask);
      if (other.size() != count || !free.contains(other)) continue;
      REQUIRE(testing::BruteForceCohesion(t, free.without(taken)) <=
              testing::BruteForceCohesion(t, free.without(other)));
    }
  }
}

}  // namespace
}  // namespace topofit::topology
