#include "topology/domain_placement.h"

#include <random>

#include <catch2/catch.hpp>

namespace topofit::topology {
namespace {

// A GB200 NVL72 compute tray: 4 GPUs through NVSwitch (NV18, NVLink 5), in clique `domain`.
Topology Gb200Node(const std::string& domain) {
  TopologySpec spec = UniformSpec(4, Link{LinkClass::kNvLink, 18, true}, "NVIDIA-GB200");
  spec.nvlink_generation = 5;
  spec.pcie_generation = 5;
  spec.domain = DomainId{domain};
  absl::StatusOr<Topology> topology = Topology::Create(spec);
  REQUIRE(topology.ok());
  return *topology;
}

std::vector<DomainMember> Members(const Topology& node, const std::vector<uint32_t>& free_masks) {
  std::vector<DomainMember> members;
  for (uint32_t mask : free_masks) members.push_back({&node, GpuSet::FromMask(mask)});
  return members;
}

std::vector<std::pair<size_t, int>> Takes(const DomainPlacement& placement) {
  std::vector<std::pair<size_t, int>> out;
  for (const DomainPart& part : placement.parts) out.emplace_back(part.member, part.allocation.gpus.size());
  return out;
}

TEST_CASE("domain placement, hand-worked", "[domain_placement]") {
  const Topology node = Gb200Node("cluster-a.1");
  using Takes_ = std::vector<std::pair<size_t, int>>;
  SECTION("an empty rack: two whole trays for 8 GPUs") {
    absl::StatusOr<DomainPlacement> p = PlaceInDomain(Members(node, std::vector<uint32_t>(18, 0xf)), 8);
    REQUIRE(p.ok());
    CHECK(Takes(*p) == Takes_{{0, 4}, {1, 4}});
  }
  SECTION("5 GPUs: the 2-free and 3-free trays, which empties both, beats 4 + 1") {
    // free counts 4, 2, 3, 4: {4,1} touches two nodes and leaves one partly free; {2,3} leaves none.
    absl::StatusOr<DomainPlacement> p = PlaceInDomain(Members(node, {0xf, 0b0110, 0b1011, 0xf}), 5);
    REQUIRE(p.ok());
    CHECK(Takes(*p) == Takes_{{1, 2}, {2, 3}});
    CHECK(p->parts[0].allocation.gpus.ToString() == "1,2");
  }
  SECTION("errors") {
    CHECK(PlaceInDomain(Members(node, {0xf}), 5).status().code() == absl::StatusCode::kResourceExhausted);
    CHECK(PlaceInDomain(Members(node, {0xf}), 0).status().code() == absl::StatusCode::kInvalidArgument);
    const Topology other = Gb200Node("cluster-b.7");
    CHECK(PlaceInDomain({{&node, GpuSet::FromMask(0xf)}, {&other, GpuSet::FromMask(0xf)}}, 2).status().code() ==
          absl::StatusCode::kInvalidArgument);
    TopologySpec plain = UniformSpec(4, Link{LinkClass::kNvLink, 18, true}, "NVIDIA-GB200");
    const Topology no_domain = *Topology::Create(plain);
    CHECK(PlaceInDomain({{&no_domain, GpuSet::FromMask(0xf)}}, 2).status().code() ==
          absl::StatusCode::kInvalidArgument);
    CHECK(PlaceInDomain({{nullptr, GpuSet()}}, 1).status().code() == absl::StatusCode::kInvalidArgument);
  }
}

// Cheapest (nodes touched, partly-free nodes left) over every way to take GPUs from each member.
std::pair<int, int> BruteForceCost(const std::vector<int>& free, int gpus) {
  std::pair<int, int> best{1 << 20, 1 << 20};
  std::vector<int> take(free.size(), 0);
  while (true) {
    int sum = 0, touched = 0, partial = 0;
    for (size_t i = 0; i < free.size(); ++i) {
      sum += take[i];
      touched += take[i] > 0;
      partial += take[i] > 0 && take[i] < free[i];
    }
    if (sum == gpus) best = std::min(best, std::make_pair(touched, partial));
    size_t i = 0;
    while (i < free.size() && take[i] == free[i]) take[i++] = 0;
    if (i == free.size()) return best;
    ++take[i];
  }
}

TEST_CASE("domain placement equals the brute-force optimum", "[domain_placement][property]") {
  const Topology node = Gb200Node("cluster-a.1");
  std::mt19937 rng(18);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<uint32_t> masks(6);
    std::vector<int> free;
    int total = 0;
    for (uint32_t& mask : masks) {
      mask = std::uniform_int_distribution<uint32_t>(0, 15)(rng);
      free.push_back(GpuSet::FromMask(mask).size());
      total += free.back();
    }
    if (total == 0) continue;
    const int gpus = std::uniform_int_distribution<int>(1, total)(rng);
    absl::StatusOr<DomainPlacement> p = PlaceInDomain(Members(node, masks), gpus);
    REQUIRE(p.ok());
    int placed = 0, partial = 0;
    for (const DomainPart& part : p->parts) {
      REQUIRE(GpuSet::FromMask(masks[part.member]).contains(part.allocation.gpus));
      placed += part.allocation.gpus.size();
      partial += part.allocation.gpus.size() < free[part.member];
    }
    CHECK(placed == gpus);
    CHECK(std::make_pair(p->nodes_used(), partial) == BruteForceCost(free, gpus));
  }
}

}  // namespace
}  // namespace topofit::topology
