// Latency of topofit's GPU set choices, per call:
//  - topofit/<shape>/k:<k>: topology::Allocate on one node, every k, random free sets;
//  - peer_gpuallocator_reimpl/<shape>/k:<k>: the re-implemented go-gpuallocator BestEffortPolicy
//    (bench/peer/go_gpuallocator.h) on the same cases;
//  - topofit_domain/gb200-nvl72/k:<k>: PlaceInDomain across an 18-node GB200 NVL72 rack, random partial
//    occupancy.
// Cases are drawn before timing from fixed-seed generators (the same ones peer_compare uses), and each
// iteration takes the next case, so a benchmark's time is a mean over varied free sets, not one lucky one.
// Targets (issue 2): <= 20 us per call at 8 GPUs, <= 200 us at 16, <= 1 ms for the NVL72 domain.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/peer/go_gpuallocator.h"
#include "topology/allocator.h"
#include "topology/catalog.h"
#include "topology/domain_placement.h"
#include "topology/topology.h"

namespace topofit::bench {
namespace {

using topology::GpuId;
using topology::GpuSet;
using topology::Link;
using topology::LinkClass;
using topology::Topology;

// --- Shapes and cases: kept identical to peer_compare.cc, so both programs see the same free sets. ---

struct Shape {
  std::string name;
  Topology topology;
};

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

// --- The benchmarks. ---

constexpr int kCasesPerBenchmark = 1024;

void BM_Allocate(benchmark::State& state, const Topology* topology, const std::vector<GpuSet>& cases, int k) {
  size_t next = 0;
  for (auto _ : state) {
    absl::StatusOr<topology::Allocation> allocation = topology::Allocate(*topology, cases[next], {.gpus = k});
    benchmark::DoNotOptimize(allocation);
    if (++next == cases.size()) next = 0;
  }
}

void BM_Peer(benchmark::State& state, const Topology* topology, const std::vector<GpuSet>& cases, int k) {
  size_t next = 0;
  for (auto _ : state) {
    GpuSet chosen = PeerBestEffort(*topology, cases[next], k);
    benchmark::DoNotOptimize(chosen);
    if (++next == cases.size()) next = 0;
  }
}

using DomainCase = std::vector<topology::DomainMember>;

void BM_PlaceInDomain(benchmark::State& state, const std::vector<DomainCase>& cases, int k) {
  size_t next = 0;
  for (auto _ : state) {
    absl::StatusOr<topology::DomainPlacement> placement = topology::PlaceInDomain(cases[next], k);
    benchmark::DoNotOptimize(placement);
    if (++next == cases.size()) next = 0;
  }
}

// A GB200 compute tray as a node in a cluster labels it: the clique label puts all 18 in one domain.
Topology Gb200Node() {
  const std::map<std::string, std::string, std::less<>> labels = {
      {std::string(topology::kGpuProductLabel), "NVIDIA-GB200"},
      {std::string(topology::kGpuCountLabel), "4"},
      {std::string(topology::kGpuCliqueLabel), "bench-cluster.1"},
  };
  absl::StatusOr<topology::LabelledTopology> labelled = topology::TopologyFromLabels(labels, 4);
  if (!labelled.ok() || labelled->fallback || !labelled->topology.domain()) {
    std::fprintf(stderr, "gb200 node from labels: %s\n",
                 labelled.ok() ? labelled->reason.c_str() : labelled.status().ToString().c_str());
    std::exit(2);
  }
  return labelled->topology;
}

constexpr int kDomainNodes = 18;
constexpr int kGpusPerTray = 4;
// Fewer than for nodes: each case holds 18 members, and there are 69 values of k.
constexpr int kDomainCasesPerBenchmark = 256;

// Random occupancy of the rack with at least k GPUs free, cut into the members' free sets.
std::vector<DomainCase> DomainCases(const Topology* node, int k, int count, uint32_t seed) {
  std::vector<DomainCase> out;
  for (const std::vector<int>& ids : RandomFreeIds(kDomainNodes * kGpusPerTray, k, count, seed)) {
    DomainCase members(kDomainNodes, topology::DomainMember{node, GpuSet()});
    for (int id : ids) {
      topology::DomainMember& member = members[id / kGpusPerTray];
      member.free = member.free.with(GpuId{id % kGpusPerTray});
    }
    out.push_back(std::move(members));
  }
  return out;
}

// Every case must be one the code under test accepts: a benchmark of an error path would flatter it.
void CheckNodeCases(const Shape& shape, const std::vector<GpuSet>& cases, int k) {
  for (GpuSet free : cases) {
    if (!topology::Allocate(shape.topology, free, {.gpus = k}).ok()) {
      std::fprintf(stderr, "%s k=%d: Allocate fails on free {%s}\n", shape.name.c_str(), k,
                   free.ToString().c_str());
      std::exit(2);
    }
  }
}

void CheckDomainCases(const std::vector<DomainCase>& cases, int k) {
  for (const DomainCase& members : cases) {
    if (absl::Status status = topology::PlaceInDomain(members, k).status(); !status.ok()) {
      std::fprintf(stderr, "domain k=%d: %s\n", k, status.ToString().c_str());
      std::exit(2);
    }
  }
}

}  // namespace
}  // namespace topofit::bench

int main(int argc, char** argv) {
  using namespace topofit::bench;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  // Registered benchmarks keep pointers into these: they live until main returns.
  static const std::vector<Shape> shapes = NodeShapes();
  for (size_t s = 0; s < shapes.size(); ++s) {
    const Shape& shape = shapes[s];
    for (int k = 1; k <= shape.topology.gpu_count(); ++k) {
      std::vector<GpuSet> cases = NodeCases(shape.topology, k, kCasesPerBenchmark, CaseSeed(s, k));
      CheckNodeCases(shape, cases, k);
      const std::string suffix = absl::StrCat("/", shape.name, "/k:", k);
      benchmark::RegisterBenchmark(absl::StrCat("topofit", suffix).c_str(), BM_Allocate, &shape.topology,
                                   cases, k)
          ->Unit(benchmark::kMicrosecond);
      benchmark::RegisterBenchmark(absl::StrCat("peer_gpuallocator_reimpl", suffix).c_str(), BM_Peer,
                                   &shape.topology, std::move(cases), k)
          ->Unit(benchmark::kMicrosecond);
    }
  }

  static const topofit::topology::Topology gb200 = Gb200Node();
  for (int k = kGpusPerTray; k <= kDomainNodes * kGpusPerTray; ++k) {
    std::vector<DomainCase> cases =
        DomainCases(&gb200, k, kDomainCasesPerBenchmark, CaseSeed(shapes.size(), k));
    CheckDomainCases(cases, k);
    benchmark::RegisterBenchmark(absl::StrCat("topofit_domain/gb200-nvl72/k:", k).c_str(), BM_PlaceInDomain,
                                 std::move(cases), k)
        ->Unit(benchmark::kMicrosecond);
  }

  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
