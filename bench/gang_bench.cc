// Placing a gang on an NVL72 fleet (issue 36: a 72-GPU gang across a 64-rack fleet at most 1 ms p99):
// decision::PlaceGang, what the extender's first member filter runs before it reserves (scheduler/
// extender_gangs.cc) and the replay's gang scheduler runs on every retry. The fleet: 64 racks, each one
// NVLink domain of 18 GB200 trays of 4 GPUs (4,608 GPUs, 1,152 nodes); the gang: 18 members of 4 GPUs
// requiring one domain. Cases:
//   empty     - every GPU free: every rack holds the gang; the tightest fit wins the tie;
//   busy      - 1-GPU pods on about half the GPUs, spread unevenly, and one rack left whole: only it holds it;
//   none      - the same with no rack whole: the refusal, which says what the best rack holds.
// Each iteration is timed alone; p50/p99/max are reported as counters (microseconds).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/latency_counters.h"
#include "decision/gang_placement.h"
#include "topology/catalog.h"

namespace topofit::decision {
namespace {

constexpr int kRacks = 64;
constexpr int kTraysPerRack = 18;

enum class Fleet { kEmpty, kBusy, kNone };

struct Nvl72Fleet {
  std::vector<NodeGpuSnapshot> nodes;
  std::vector<GangCandidate> candidates;

  explicit Nvl72Fleet(Fleet fleet) {
    const auto tray = std::make_shared<const topology::Topology>(topology::CatalogShape("gb200-nvl72-node").value());
    const auto origin = std::make_shared<const NodeOrigin>();
    nodes.reserve(kRacks * kTraysPerRack);
    for (int rack = 0; rack < kRacks; ++rack) {
      for (int n = 0; n < kTraysPerRack; ++n) {
        NodeGpuSnapshot node;
        node.node = absl::StrFormat("nvl72-%02d-%02d", rack, n);
        node.topology = tray;
        node.origin = origin;
        // Busy: 0-3 GPUs taken by 1-GPU pods, spread over racks and trays; the last rack whole unless kNone.
        const int busy = fleet == Fleet::kEmpty || (fleet == Fleet::kBusy && rack == kRacks - 1)
                             ? 0
                             : std::max(rack == kRacks - 1 ? 1 : 0, (rack * 7 + n * 3) % 4);
        node.ours = topology::GpuSet::FirstN(busy);
        nodes.push_back(std::move(node));
      }
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      const int rack = static_cast<int>(i) / kTraysPerRack;
      candidates.push_back({.node = &nodes[i],
                            .reserved = {},
                            .domain = NvlinkDomain{"nvidia.com/gpu.clique", topology::DomainId{absl::StrCat("rack.", rack)}}});
    }
  }
};

GangAsk SeventyTwoGpus() {
  GpuDemand member;
  member.request.gpus = 4;
  GangTopologyConstraint required{.annotation = "topofit.io/gang-required-topology", .value = "domain",
                                  .level = GangLevel::kDomain, .not_understood = ""};
  return GangAsk{.member = member, .members = 18, .topology = GangTopology{.required = required, .preferred = {}}};
}

void BM_PlaceGang(benchmark::State& state, Fleet fleet) {
  const Nvl72Fleet nodes(fleet);
  const GangAsk ask = SeventyTwoGpus();
  std::vector<double> micros;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<GangPlacement> placement = PlaceGang(ask, nodes.candidates);
    micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    if (placement.ok() != (fleet != Fleet::kNone)) state.SkipWithError(std::string(placement.status().message()).c_str());
    benchmark::DoNotOptimize(placement);
  }
  bench::ReportLatencies(state, std::move(micros));
}

BENCHMARK_CAPTURE(BM_PlaceGang, empty, Fleet::kEmpty)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PlaceGang, busy, Fleet::kBusy)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_PlaceGang, none, Fleet::kNone)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace topofit::decision

BENCHMARK_MAIN();
