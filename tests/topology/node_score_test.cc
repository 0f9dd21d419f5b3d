#include "topology/node_score.h"

#include <catch2/catch.hpp>

#include "tests/topology/test_topologies.h"

namespace topofit::topology {
namespace {

using testing::kPcieSplitRows;
using testing::MakeTopology;

int Score(const Topology& topology, uint32_t free_mask, int gpus) {
  absl::StatusOr<Allocation> a = Allocate(topology, GpuSet::FromMask(free_mask), {.gpus = gpus});
  REQUIRE(a.ok());
  return NodeFitScore(topology, *a);
}

TEST_CASE("node fit score, hand-worked", "[node_score]") {
  const Topology pcie = MakeTopology(kPcieSplitRows, "NVIDIA-A10G");
  // A10G is PCIe Gen4: PHB 20 GB/s, SYS 10 GB/s; best pair on the node 20 GB/s.
  struct Row {
    const char* name;
    uint32_t free;
    int gpus;
    int score;
  };
  const Row rows[] = {
      // quality 1000 (a PHB pair is the best pair); packing 2/8 = 250; leftover {2..7}: PHB pairs
      // 1 (2-3) + 6 (4..7) = 7 x 20 + SYS 2 x 4 = 8 x 10 = 220 of 15 x 20 = 300 -> 733.
      // (600*1000 + 250*250 + 150*733) / 10000 = 77.2 -> 77
      {"empty node, pair", 0xff, 2, 77},
      // 2 GPUs on a node whose free ones sit across sockets: {3,4}: quality 10/20 = 500; packing 8/8;
      // nothing left. (600*500 + 250*1000 + 150*1000) / 10000 = 70
      {"scattered pair", 0b00011000, 2, 70},
      // the same pair on a busy node whose free pair shares a socket: quality, packing, cohesion all 1000
      {"busy node, good pair", 0b00000011, 2, 100},
      // 1 GPU on an empty node: quality 1000; packing 125; leftover 7: 3 + 6 PHB pairs... {1..7}: PHB pairs
      // 3 (1-2,1-3,2-3) + 6 (4..7) = 9 x 20 = 180, SYS 3 x 4 = 12 x 10 = 120 -> 300 of 21 x 20 = 420 -> 714.
      // (600000 + 31250 + 107100) / 10000 = 73.8 -> 73
      {"empty node, single", 0xff, 1, 73},
  };
  for (const Row& row : rows) {
    SECTION(row.name) { CHECK(Score(pcie, row.free, row.gpus) == row.score); }
  }
}

TEST_CASE("node fit score stays in bounds on random nodes", "[node_score][property]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const Topology t = testing::RandomTopology(2 + trial % 15, rng);
    const GpuSet free = GpuSet::FromMask(std::uniform_int_distribution<uint32_t>(1, (1u << t.gpu_count()) - 1)(rng));
    const int k = std::uniform_int_distribution<int>(1, free.size())(rng);
    absl::StatusOr<Allocation> a = Allocate(t, free, {.gpus = k});
    REQUIRE(a.ok());
    const int score = NodeFitScore(t, *a);
    CHECK(score >= kMinNodeScore);
    CHECK(score <= kMaxNodeScore);
  }
}

}  // namespace
}  // namespace topofit::topology
