// topofit's allocator against the re-implemented go-gpuallocator BestEffortPolicy (the NVIDIA device
// plugin's GetPreferredAllocation) on the same random free sets as allocator_bench: for every shape and k,
// how often our set's estimated ring bandwidth (SetQualityTable) is higher, equal or lower than the peer's,
// the mean and largest ratio, and the mean time per call of each. Prints a markdown table.
//
// Exit status: 0 when ours is never lower; 1 when it is (the allocator claims optimality, so that is a
// bug); 2 when the re-implementation disagrees with go-gpuallocator's own test expectations, or a case
// cannot be set up.
//
// Same seed, same output: the only varying figures are the timings.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/cases.h"
#include "replay/peer/go_gpuallocator.h"
#include "topology/allocator.h"
#include "topology/catalog.h"
#include "topology/topology.h"

namespace topofit::bench {
namespace {

using topology::GpuId;
using topology::GpuSet;
using topology::Link;
using topology::LinkClass;
using topology::Topology;

// --- The re-implementation against go-gpuallocator's own expectations. ---

// Cases from go-gpuallocator's gpuallocator/besteffort_test.go whose answer does not hinge on the PCIe
// level beneath an NVLink pair (which `nvidia-smi topo -m`, and so topofit's model, does not keep). Left
// out for that reason: "Single NVLINK, prefer same switch" and the DGX-1 (P100) pairs, where upstream's
// test node gives the NVLink pairs different PCIe levels.
struct PeerExpectation {
  const char* shape;
  std::vector<int> free;  // empty: the whole node, then what earlier steps of the same row left
  std::vector<std::pair<int, std::vector<int>>> steps;  // (k, expected set), allocated in turn
};

bool CheckPeerAgainstUpstream() {
  const std::vector<PeerExpectation> expectations = {
      {"dgx1-v100", {}, {{2, {0, 3}}, {2, {1, 2}}, {2, {4, 7}}, {2, {5, 6}}}},
      {"dgx1-v100", {}, {{4, {0, 1, 2, 3}}, {4, {4, 5, 6, 7}}}},
      {"dgx1-v100", {}, {{8, {0, 1, 2, 3, 4, 5, 6, 7}}}},
      {"dgx1-v100", {}, {{1, {0}}, {1, {1}}, {1, {2}}, {1, {3}}, {1, {4}}, {1, {5}}, {1, {6}}, {1, {7}}}},
      {"dgx1-v100", {0, 4, 5, 6}, {{2, {5, 6}}}},  // "Single NVLINK, prefer same socket"
      {"dgx1-v100", {0, 3, 1}, {{2, {0, 3}}}},     // "Prefer dual NVLINK same socket"
      {"dgx1-v100", {0, 1, 4}, {{2, {0, 4}}}},     // "Prefer dual NVLINK cross socket"
      {"rtx8000-nvlink-4x", {}, {{2, {0, 3}}, {2, {1, 2}}}},
      {"rtx8000-nvlink-4x", {}, {{4, {0, 1, 2, 3}}}},
  };
  bool ok = true;
  for (const PeerExpectation& e : expectations) {
    const Topology topology = OrDie(topology::CatalogShape(e.shape), e.shape);
    GpuSet free = topology.all_gpus();
    if (!e.free.empty()) {
      free = GpuSet();
      for (int id : e.free) free = free.with(GpuId{id});
    }
    for (const auto& [k, ids] : e.steps) {
      GpuSet want;
      for (int id : ids) want = want.with(GpuId{id});
      const GpuSet got = PeerBestEffort(topology, free, k);
      if (got != want) {
        std::fprintf(stderr,
                     "peer re-implementation: %s free {%s} k=%d gave {%s}, go-gpuallocator's test expects {%s}\n",
                     e.shape, free.ToString().c_str(), k, got.ToString().c_str(), want.ToString().c_str());
        ok = false;
      }
      free = free.without(got);
    }
  }
  return ok;
}

// --- The comparison. ---

// Enough cases that every shape's odd corners come up, except where the peer's partition enumeration
// explodes: 16 free GPUs in blocks of 3 are 22.4 million partitions, of 2, 4 and 5 about 2 million each.
int CaseCount(int gpus, int k) {
  if (gpus <= 8) return 4000;
  if (k >= 2 && k <= 6) return 100;
  return 2000;
}

struct Row {
  int cases = 0;
  int higher = 0, equal = 0, lower = 0;
  int peer_short = 0;  // the peer returned its padded block: fewer than k GPUs
  double ratio_sum = 0;
  int ratio_count = 0;
  double ratio_max = 0;
  double ours_us = 0, peer_us = 0;  // mean per call
};

template <typename F>
double MeanMicros(const std::vector<GpuSet>& cases, F&& call) {
  const auto start = std::chrono::steady_clock::now();
  for (GpuSet free : cases) call(free);
  const std::chrono::duration<double, std::micro> elapsed = std::chrono::steady_clock::now() - start;
  return elapsed.count() / static_cast<double>(cases.size());
}

Row Compare(const Topology& topology, int k, const std::vector<GpuSet>& cases) {
  Row row;
  row.cases = static_cast<int>(cases.size());
  std::vector<GpuSet> ours, peers;
  ours.reserve(cases.size());
  peers.reserve(cases.size());
  row.ours_us = MeanMicros(cases, [&](GpuSet free) {
    absl::StatusOr<topology::Allocation> allocation = topology::Allocate(topology, free, {.gpus = k});
    if (!allocation.ok()) {
      std::fprintf(stderr, "Allocate k=%d free {%s}: %s\n", k, free.ToString().c_str(),
                   allocation.status().ToString().c_str());
      std::exit(2);
    }
    ours.push_back(allocation->gpus);
  });
  row.peer_us = MeanMicros(cases, [&](GpuSet free) { peers.push_back(PeerBestEffort(topology, free, k)); });

  const topology::SetQualityTable& quality = topology.quality();
  for (size_t i = 0; i < cases.size(); ++i) {
    if (peers[i].size() != k) {
      ++row.peer_short;
      continue;
    }
    const int64_t our_mbps = quality.Of(ours[i]).bandwidth_mbps;
    const int64_t peer_mbps = quality.Of(peers[i]).bandwidth_mbps;
    if (our_mbps > peer_mbps) ++row.higher;
    if (our_mbps == peer_mbps) ++row.equal;
    if (our_mbps < peer_mbps) ++row.lower;
    if (peer_mbps > 0) {  // a single GPU has no ring bandwidth: no ratio for k = 1
      const double ratio = static_cast<double>(our_mbps) / static_cast<double>(peer_mbps);
      row.ratio_sum += ratio;
      ++row.ratio_count;
      row.ratio_max = std::max(row.ratio_max, ratio);
    }
  }
  return row;
}

std::string Ratio(double value, bool any) { return any ? absl::StrFormat("%.3f", value) : "–"; }

}  // namespace
}  // namespace topofit::bench

int main() {
  using namespace topofit::bench;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // rows appear as they finish: the 16-GPU ones take a while
  if (!CheckPeerAgainstUpstream()) return 2;

  std::printf("| shape | GPUs | k | cases | ours higher | equal | ours lower | peer short | mean ratio | max ratio "
              "| ours us/call | peer us/call |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  int lower = 0;
  const std::vector<Shape> shapes = NodeShapes();
  for (size_t s = 0; s < shapes.size(); ++s) {
    const Shape& shape = shapes[s];
    const int n = shape.topology.gpu_count();
    for (int k = 1; k <= n; ++k) {
      const Row row = Compare(shape.topology, k, NodeCases(shape.topology, k, CaseCount(n, k), CaseSeed(s, k)));
      lower += row.lower;
      std::printf("| %s | %d | %d | %d | %d | %d | %d | %d | %s | %s | %.2f | %.2f |\n", shape.name.c_str(), n, k,
                  row.cases, row.higher, row.equal, row.lower, row.peer_short,
                  Ratio(row.ratio_sum / std::max(row.ratio_count, 1), row.ratio_count > 0).c_str(),
                  Ratio(row.ratio_max, row.ratio_count > 0).c_str(), row.ours_us, row.peer_us);
    }
  }
  std::printf(
      "\nRatio: our estimated ring bandwidth over the peer's, per case, over cases where the peer returned k GPUs. "
      "\"peer short\": the peer returned its padded block, fewer than k GPUs (the bug NVIDIA/go-gpuallocator#80 "
      "fixes); those cases are not compared. "
      "Cases per row: 4000 at 8 GPUs; at 16 GPUs 2000, but 100 for k = 2..6, where the peer enumerates up to "
      "22.4 million partitions per call. Times are means per call on this machine, wall clock.\n");
  if (lower > 0) {
    std::fprintf(stderr, "ours was lower than the peer in %d cases\n", lower);
    return 1;
  }
  return 0;
}
