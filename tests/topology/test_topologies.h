#pragma once

// Builders and brute-force references shared by the topology tests.

#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "topology/products.h"
#include "topology/set_quality.h"
#include "topology/topology.h"

namespace topofit::topology::testing {

// DGX-1 with V100 (hybrid cube-mesh, six NVLinks per GPU), written out here so the hand-worked
// expectations do not depend on the catalog.
inline const std::vector<absl::string_view> kDgx1V100Rows = {
    "X   NV1 NV1 NV2 NV2 SYS SYS SYS", "NV1 X   NV2 NV1 SYS NV2 SYS SYS", "NV1 NV2 X   NV2 SYS SYS NV1 SYS",
    "NV2 NV1 NV2 X   SYS SYS SYS NV1", "NV2 SYS SYS SYS X   NV1 NV1 NV2", "SYS NV2 SYS SYS NV1 X   NV2 NV1",
    "SYS SYS NV1 SYS NV1 NV2 X   NV2", "SYS SYS SYS NV1 NV2 NV1 NV2 X"};

// Two NUMA halves of four PCIe-only GPUs (g5.48xlarge-like).
inline const std::vector<absl::string_view> kPcieSplitRows = {
    "X   PHB PHB PHB SYS SYS SYS SYS", "PHB X   PHB PHB SYS SYS SYS SYS", "PHB PHB X   PHB SYS SYS SYS SYS",
    "PHB PHB PHB X   SYS SYS SYS SYS", "SYS SYS SYS SYS X   PHB PHB PHB", "SYS SYS SYS SYS PHB X   PHB PHB",
    "SYS SYS SYS SYS PHB PHB X   PHB", "SYS SYS SYS SYS PHB PHB PHB X"};

inline GpuSet Set(std::initializer_list<int> ids) {
  GpuSet set;
  for (int id : ids) set = set.with(GpuId{id});
  return set;
}

// A topology from `nvidia-smi topo -m` token rows, NVSwitch inferred as a parsed one would be.
inline Topology MakeTopology(const std::vector<absl::string_view>& rows, const std::string& product) {
  absl::StatusOr<TopologySpec> spec = MatrixSpec(rows, product);
  REQUIRE(spec.ok());
  const std::optional<ProductSpec> facts = FindProduct(product);
  if (facts) {
    spec->nvlink_generation = facts->nvlink_generation;
    spec->pcie_generation = facts->pcie_generation;
  }
  InferNvSwitch(*spec, facts ? facts->nvlinks_per_gpu : 0);
  absl::StatusOr<Topology> topology = Topology::Create(*spec);
  REQUIRE(topology.ok());
  return *topology;
}

// A random node: n GPUs, each pair independently one of NV1..NV4, PIX, PXB, PHB, NODE, SYS; random
// generations. Unstructured on purpose: it exercises the quality table and allocator on link mixes that
// no real machine has.
inline Topology RandomTopology(int n, std::mt19937& rng) {
  TopologySpec spec = UniformSpec(n, Link{}, "synthetic");
  std::uniform_int_distribution<int> pick(0, 8);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const int r = pick(rng);
      const Link link = r < 4 ? Link{LinkClass::kNvLink, r + 1, false}
                              : Link{static_cast<LinkClass>(static_cast<int>(LinkClass::kPix) + r - 4), 0, false};
      spec.gpu_links[a][b] = spec.gpu_links[b][a] = link;
    }
  }
  spec.nvlink_generation = std::uniform_int_distribution<int>(1, 5)(rng);
  spec.pcie_generation = std::uniform_int_distribution<int>(3, 5)(rng);
  absl::StatusOr<Topology> topology = Topology::Create(spec);
  REQUIRE(topology.ok());
  return *topology;
}

// A random node shaped like real servers: a PCIe tree (2 sockets, host bridges, switches), so PCIe classes
// follow from the tree, plus random NVLink bridges between some pairs.
inline Topology RandomServer(int n, std::mt19937& rng) {
  TopologySpec spec = UniformSpec(n, Link{}, "synthetic-server");
  std::vector<int> socket(n), bridge(n), sw(n);
  const int per_switch = std::uniform_int_distribution<int>(1, 2)(rng);
  for (int a = 0; a < n; ++a) {
    sw[a] = a / per_switch;
    bridge[a] = a / (2 * per_switch);
    socket[a] = a < n / 2 ? 0 : 1;
  }
  std::bernoulli_distribution nvlink(0.25);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      Link link{LinkClass::kSys, 0, false};
      if (nvlink(rng)) {
        link = Link{LinkClass::kNvLink, std::uniform_int_distribution<int>(1, 4)(rng), false};
      } else if (sw[a] == sw[b]) {
        link.link_class = LinkClass::kPix;
      } else if (bridge[a] == bridge[b]) {
        link.link_class = LinkClass::kPxb;
      } else if (socket[a] == socket[b]) {
        link.link_class = LinkClass::kNode;
      }
      spec.gpu_links[a][b] = spec.gpu_links[b][a] = link;
    }
  }
  spec.nvlink_generation = 2;
  spec.pcie_generation = 4;
  absl::StatusOr<Topology> topology = Topology::Create(spec);
  REQUIRE(topology.ok());
  return *topology;
}

// Reference ring bandwidth of one set, by a different algorithm than the table's dynamic programme: try
// each distinct pair bandwidth as a threshold, from the highest, and search by backtracking for a
// Hamiltonian cycle that uses only pairs at or above it.
class BruteForceRing {
 public:
  explicit BruteForceRing(const Topology& topology) : topology_(topology) {}

  int64_t Bandwidth(GpuSet set) const {
    const std::vector<GpuId> ids = set.ids();
    if (ids.size() < 2) return 0;
    if (ids.size() == 2) return topology_.pair_bandwidth_mbps(ids[0], ids[1]);
    std::vector<int64_t> thresholds;
    for (GpuId a : ids) {
      for (GpuId b : ids) {
        if (a < b) thresholds.push_back(topology_.pair_bandwidth_mbps(a, b));
      }
    }
    std::sort(thresholds.rbegin(), thresholds.rend());
    thresholds.erase(std::unique(thresholds.begin(), thresholds.end()), thresholds.end());
    for (int64_t t : thresholds) {
      std::vector<bool> used(ids.size(), false);
      used[0] = true;
      if (Extend(ids, t, 0, 1, used)) return t;
    }
    return 0;
  }

 private:
  bool Extend(const std::vector<GpuId>& ids, int64_t t, size_t at, size_t placed, std::vector<bool>& used) const {
    if (placed == ids.size()) return topology_.pair_bandwidth_mbps(ids[at], ids[0]) >= t;
    for (size_t next = 1; next < ids.size(); ++next) {
      if (used[next] || topology_.pair_bandwidth_mbps(ids[at], ids[next]) < t) continue;
      used[next] = true;
      if (Extend(ids, t, next, placed + 1, used)) return true;
      used[next] = false;
    }
    return false;
  }
  const Topology& topology_;
};

// Weakest link and cohesion of a set, straight from the pairs.
inline LinkClass BruteForceWeakest(const Topology& topology, GpuSet set) {
  LinkClass weakest = LinkClass::kSelf;
  for (GpuId a : set.ids()) {
    for (GpuId b : set.ids()) {
      if (a < b) weakest = std::max(weakest, topology.link(a, b).link_class);
    }
  }
  return weakest;
}

inline int64_t BruteForceCohesion(const Topology& topology, GpuSet set) {
  int64_t sum = 0;
  for (GpuId a : set.ids()) {
    for (GpuId b : set.ids()) {
      if (a < b) sum += topology.pair_bandwidth_mbps(a, b);
    }
  }
  return sum;
}

}  // namespace topofit::topology::testing
