#include "bench/cases.h"

#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <utility>

#include "topology/catalog.h"

namespace topofit::bench {

using topology::GpuId;
using topology::GpuSet;
using topology::Link;
using topology::LinkClass;
using topology::Topology;


using topology::GpuId;
using topology::GpuSet;
using topology::Link;
using topology::LinkClass;
using topology::Topology;

// --- Shapes and cases: kept identical to allocator_bench.cc, so both programs see the same free sets. ---

Topology OrDie(absl::StatusOr<Topology> topology, absl::string_view what) {
  if (!topology.ok()) {
    std::fprintf(stderr, "%s: %s\n", std::string(what).c_str(), topology.status().ToString().c_str());
    std::exit(2);
  }
  return *std::move(topology);
}

// A 16-GPU node no catalog lists, mixing every link kind the allocator must weigh: a DGX-1 V100 cube-mesh
// (GPUs 0-7), four PCIe cards with 2-link NVLink bridges 8-9 and 10-11, four PCIe-only cards 12-15 in PIX
// pairs; CPU 0 holds 0-3 and 8-11, CPU 1 holds 4-7 and 12-15. PCIe paths within a card group are PXB,
// between groups NODE on one CPU and SYS across.
namespace {
Topology Mixed16() {
  topology::TopologySpec spec = topology::UniformSpec(16, Link{LinkClass::kSys, 0, false}, "synthetic-mixed");
  auto numa = [](int gpu) { return (gpu % 8) < 4 ? 0 : 1; };
  auto group = [](int gpu) { return gpu < 8 ? 0 : gpu < 12 ? 1 : 2; };
  for (int a = 0; a < 16; ++a) {
    spec.gpus[a].numa_node = numa(a);
    for (int b = 0; b < 16; ++b) {
      if (a == b) continue;
      LinkClass pcie = numa(a) == numa(b) ? LinkClass::kNode : LinkClass::kSys;
      if (group(a) == group(b) && group(a) != 0) pcie = LinkClass::kPxb;
      spec.gpu_links[a][b] = Link{pcie, 0, false};
    }
  }
  auto nv = [&spec](int a, int b, int links) {
    spec.gpu_links[a][b] = spec.gpu_links[b][a] = Link{LinkClass::kNvLink, links, false};
  };
  // DGX-1 V100 hybrid cube-mesh (the catalog's dgx1-v100 matrix).
  for (auto [a, b] : {std::pair{0, 1}, {0, 2}, {1, 3}, {2, 6}, {3, 7}, {4, 5}, {4, 6}, {5, 7}}) nv(a, b, 1);
  for (auto [a, b] : {std::pair{0, 3}, {0, 4}, {1, 2}, {1, 5}, {2, 3}, {4, 7}, {5, 6}, {6, 7}}) nv(a, b, 2);
  nv(8, 9, 2);
  nv(10, 11, 2);
  spec.gpu_links[12][13] = spec.gpu_links[13][12] = Link{LinkClass::kPix, 0, false};
  spec.gpu_links[14][15] = spec.gpu_links[15][14] = Link{LinkClass::kPix, 0, false};
  spec.nvlink_generation = 2;
  spec.pcie_generation = 3;
  return OrDie(Topology::Create(std::move(spec)), "mixed-16");
}

}  // namespace

std::vector<Shape> NodeShapes() {
  std::vector<Shape> shapes;
  for (absl::string_view name : {"dgx1-v100", "dgx-a100", "hgx-h100", "g5.48xlarge", "dgx2"}) {
    shapes.push_back({std::string(name), OrDie(topology::CatalogShape(name), name)});
  }
  shapes.push_back({"mixed-16", Mixed16()});
  return shapes;
}

// Draws from the generator without std::uniform_int_distribution, whose mapping differs between standard
// libraries: the same seed gives the same cases everywhere. The modulo bias (< 2^-27) does not matter here.
int Below(std::mt19937& rng, int bound) { return static_cast<int>(rng() % static_cast<uint32_t>(bound)); }

// `count` random sets of free GPUs among `n`, each of at least `k`: the number free is uniform in [k, n],
// which GPUs are free uniform among those sets.
std::vector<std::vector<int>> RandomFreeIds(int n, int k, int count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::vector<int>> out;
  for (int c = 0; c < count; ++c) {
    std::vector<int> ids(n);
    std::iota(ids.begin(), ids.end(), 0);
    const int free = k + Below(rng, n - k + 1);
    for (int i = 0; i < free; ++i) std::swap(ids[i], ids[i + Below(rng, n - i)]);  // partial Fisher-Yates
    ids.resize(free);
    out.push_back(std::move(ids));
  }
  return out;
}

std::vector<GpuSet> NodeCases(const Topology& topology, int k, int count, uint32_t seed) {
  std::vector<GpuSet> out;
  for (const std::vector<int>& ids : RandomFreeIds(topology.gpu_count(), k, count, seed)) {
    GpuSet set;
    for (int id : ids) set = set.with(GpuId{id});
    out.push_back(set);
  }
  return out;
}

// One seed per (shape, k), so adding a shape does not change another's cases.
uint32_t CaseSeed(size_t shape_index, int k) {
  return 0x70f0f17u + static_cast<uint32_t>(shape_index) * 1000u + static_cast<uint32_t>(k);
}

}  // namespace topofit::bench
