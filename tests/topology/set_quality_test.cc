#include "topology/set_quality.h"

#include <random>

#include <catch2/catch.hpp>

#include "tests/topology/test_topologies.h"

namespace topofit::topology {
namespace {

using testing::kDgx1V100Rows;
using testing::kPcieSplitRows;
using testing::MakeTopology;
using testing::Set;

// DGX-1 with V100 (hybrid cube-mesh, six NVLinks per GPU).
TEST_CASE("ring bandwidth on DGX-1 V100 follows its NVLink rings", "[set_quality]") {
  const Topology dgx1 = MakeTopology(kDgx1V100Rows, "Tesla-V100-SXM2-16GB");
  const SetQualityTable& table = dgx1.quality();
  struct Row {
    const char* name;
    GpuSet set;
    int64_t mbps;
    LinkClass weakest;
  };
  const Row rows[] = {
      // one GPU runs no collective
      {"single GPU", Set({5}), 0, LinkClass::kSelf},
      // NV2 = 2 links x 25 GB/s (NVLink 2)
      {"NV2 pair", Set({0, 3}), 50'000, LinkClass::kNvLink},
      // PCIe Gen3 across sockets: min(12 GB/s x 5/6, 10 GB/s inter-socket) = 10 GB/s
      {"SYS pair", Set({0, 5}), 10'000, LinkClass::kSys},
      // every ring through 0,1,2,3 uses one of GPU0's NV1 links (its NV2 peers in the quad: only 3)
      {"quad 0-3", Set({0, 1, 2, 3}), 25'000, LinkClass::kNvLink},
      // 0-3-2-1-5-6-7-4-0 is a ring of NV2 links only
      {"all eight", dgx1.all_gpus(), 50'000, LinkClass::kSys},
      // 0,3,4 has no NVLink between 3 and 4, so the ring crosses SYS
      {"triangle with a SYS pair", Set({0, 3, 4}), 10'000, LinkClass::kSys},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      CHECK(table.Of(row.set).bandwidth_mbps == row.mbps);
      CHECK(table.Of(row.set).weakest == row.weakest);
    }
  }
  CHECK(table.BestBandwidth(4) == 25'000);
  CHECK(table.BestBandwidth(8) == 50'000);
}

TEST_CASE("NVSwitch shapes give every set the GPU's full NVLink bandwidth", "[set_quality]") {
  TopologySpec spec = UniformSpec(8, Link{LinkClass::kNvLink, 12, false}, "NVIDIA-A100-SXM4-80GB");
  spec.nvlink_generation = 3;
  spec.pcie_generation = 4;
  InferNvSwitch(spec, 12);
  absl::StatusOr<Topology> a100 = Topology::Create(spec);
  REQUIRE(a100.ok());
  CHECK(a100->has_nvswitch());
  // NV12 through the switch: 12 links x 25 GB/s = 300 GB/s, whichever GPUs
  for (uint32_t mask : {0b11u, 0b10000001u, 0b1111u, 0b11110000u, 0xffu}) {
    CHECK(a100->quality().Of(GpuSet::FromMask(mask)).bandwidth_mbps == 300'000);
  }
}

TEST_CASE("PCIe classes set bandwidth through the host bridge and socket penalties", "[set_quality]") {
  // L40S cards are PCIe Gen4: 24 GB/s through switches; PHB/NODE pay the 5/6 TLP overhead (20 GB/s);
  // SYS is capped by the inter-socket link (10 GB/s).
  const Topology g = MakeTopology({"X PIX PHB SYS", "PIX X PHB SYS", "PHB PHB X SYS", "SYS SYS SYS X"}, "NVIDIA-L40S");
  CHECK(g.quality().Of(GpuSet::FromMask(0b0011)).bandwidth_mbps == 24'000);
  CHECK(g.quality().Of(GpuSet::FromMask(0b0111)).bandwidth_mbps == 20'000);
  CHECK(g.quality().Of(GpuSet::FromMask(0b1111)).bandwidth_mbps == 10'000);
  CHECK(g.quality().Of(GpuSet::FromMask(0b0111)).weakest == LinkClass::kPhb);
}

TEST_CASE("quality table matches brute force on every subset of random nodes", "[set_quality][property]") {
  std::mt19937 rng(20261130);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 2 + trial % 9;  // 2..10 GPUs
    const Topology topology = trial % 2 ? testing::RandomTopology(n, rng) : testing::RandomServer(n, rng);
    const testing::BruteForceRing ring(topology);
    for (uint32_t mask = 1; mask < (1u << n); ++mask) {
      const GpuSet set = GpuSet::FromMask(mask);
      INFO("trial " << trial << " set {" << set.ToString() << "}");
      REQUIRE(topology.quality().Of(set).bandwidth_mbps == ring.Bandwidth(set));
      REQUIRE(topology.quality().Of(set).weakest == testing::BruteForceWeakest(topology, set));
      REQUIRE(topology.quality().Cohesion(set) == testing::BruteForceCohesion(topology, set));
    }
  }
}

}  // namespace
}  // namespace topofit::topology
