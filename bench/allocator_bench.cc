// Latency of topofit's GPU set choices, per call:
//  - topofit/<shape>/k:<k>: topology::Allocate on one node, every k, random free sets;
//  - peer_gpuallocator_reimpl/<shape>/k:<k>: the re-implemented go-gpuallocator BestEffortPolicy
//    (replay/peer/go_gpuallocator.h) on the same cases;
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
#include "bench/cases.h"
#include "replay/peer/go_gpuallocator.h"
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
