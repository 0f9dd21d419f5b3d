#include "topology/allocator.h"

#include <random>

#include <catch2/catch.hpp>

#include "tests/topology/test_topologies.h"
#include "topology/catalog.h"

namespace topofit::topology {
namespace {

using testing::kDgx1V100Rows;
using testing::kPcieSplitRows;
using testing::MakeTopology;
using testing::Set;

TEST_CASE("allocator picks the best set, hand-worked", "[allocator]") {
  const Topology dgx1 = MakeTopology(kDgx1V100Rows, "Tesla-V100-SXM2-16GB");
  const Topology pcie = MakeTopology(kPcieSplitRows, "NVIDIA-A10G");
  struct Row {
    const char* name;
    const Topology* topology;
    GpuSet free;
    AllocationRequest request;
    GpuSet expected;
  };
  const Row rows[] = {
      // NV2 pairs all reach 50 GB/s; every GPU has the same pair sum (6 links + 3 SYS), so every NV2 pair
      // leaves the same cohesion; lowest ids: {0,3} before {0,4}.
      {"dgx1 pair: an NV2 pair, lowest ids", &dgx1, dgx1.all_gpus(), {.gpus = 2}, Set({0, 3})},
      // all 4-sets top out at 25 GB/s (the NV2 links form one 8-ring, no NV2 4-cycle); among the NVLink
      // quads the one whose leftover keeps the other quad whole wins.
      {"dgx1 quad: one NVLink half", &dgx1, dgx1.all_gpus(), {.gpus = 4}, Set({0, 1, 2, 3})},
      // the whole node: the NV2 ring gives 50 GB/s
      {"dgx1 all eight", &dgx1, dgx1.all_gpus(), {.gpus = 8}, dgx1.all_gpus()},
      // taking GPU0 leaves {1} + {4,5,6}: three PHB pairs stay together; taking GPU4 would leave two.
      {"pcie best fit: take from the emptier half", &pcie, Set({0, 1, 4, 5, 6}), {.gpus = 1}, Set({0})},
      // a 2-GPU pod inside one half (PHB, 20 GB/s) rather than across the sockets (SYS, 10 GB/s)
      {"pcie pair stays in one socket", &pcie, Set({3, 4, 5}), {.gpus = 2}, Set({4, 5})},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      absl::StatusOr<Allocation> allocation = Allocate(*row.topology, row.free, row.request);
      REQUIRE(allocation.ok());
      CHECK(allocation->gpus.ToString() == row.expected.ToString());
      CHECK(allocation->leftover == row.free.without(row.expected));
    }
  }
}

TEST_CASE("allocator honours min-link and min-bandwidth and explains misses", "[allocator]") {
  const Topology dgx1 = MakeTopology(kDgx1V100Rows, "Tesla-V100-SXM2-16GB");
  const Topology pcie = MakeTopology(kPcieSplitRows, "NVIDIA-A10G");

  SECTION("min-link NV on a PCIe node: names the best reachable link") {
    absl::StatusOr<FitResult> fit = Fit(pcie, pcie.all_gpus(), {.gpus = 2, .min_link = LinkClass::kNvLink});
    REQUIRE(fit.ok());
    CHECK_FALSE(fit->fits());
    REQUIRE(fit->insufficient.size() == 1);
    CHECK(fit->insufficient[0].kind == Insufficiency::Kind::kMinLink);
    CHECK(fit->insufficient[0].available == static_cast<int64_t>(LinkClass::kPhb));
    CHECK_THAT(Explain(*fit), Catch::Contains("needs links of NV or better, best reachable is PHB") &&
                                  Catch::Contains("best set 0,1"));
    CHECK(Allocate(pcie, pcie.all_gpus(), {.gpus = 2, .min_link = LinkClass::kNvLink}).status().code() ==
          absl::StatusCode::kFailedPrecondition);
  }
  SECTION("min-link skips a better-bandwidth set whose pairs are weaker") {
    // {0,3,4}: ring NV2 0-3 ... crosses SYS; with NV required the triangle 0,1,2 (all NVLink) is chosen
    absl::StatusOr<Allocation> a =
        Allocate(dgx1, Set({0, 1, 2, 3, 4}), {.gpus = 3, .min_link = LinkClass::kNvLink});
    REQUIRE(a.ok());
    CHECK(a->quality.weakest == LinkClass::kNvLink);
  }
  SECTION("no NVLink quad of DGX-1 reaches 50 GB/s, the whole node does") {
    absl::StatusOr<FitResult> quad = Fit(dgx1, dgx1.all_gpus(), {.gpus = 4, .min_bandwidth_mbps = 50'000});
    REQUIRE(quad.ok());
    CHECK_FALSE(quad->fits());
    CHECK(quad->insufficient[0].kind == Insufficiency::Kind::kMinBandwidth);
    CHECK(FormatBandwidth(quad->insufficient[0].available) == "25GB/s");
    CHECK(Fit(dgx1, dgx1.all_gpus(), {.gpus = 8, .min_bandwidth_mbps = 50'000})->fits());
  }
  SECTION("a single GPU runs no collective, so a bandwidth floor does not apply") {
    CHECK(Fit(pcie, Set({7}), {.gpus = 1, .min_bandwidth_mbps = 200'000})->fits());
  }
  SECTION("too few free GPUs") {
    absl::StatusOr<FitResult> fit = Fit(dgx1, Set({1, 2, 3}), {.gpus = 4});
    REQUIRE(fit.ok());
    CHECK_FALSE(fit->best_reachable.has_value());
    CHECK(Explain(*fit) == "needs 4 GPUs, 3 free");
    CHECK(Allocate(dgx1, Set({1, 2, 3}), {.gpus = 4}).status().code() == absl::StatusCode::kResourceExhausted);
  }
  SECTION("impossible requests are errors, not crashes") {
    CHECK(Fit(dgx1, dgx1.all_gpus(), {.gpus = 0}).status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(Fit(dgx1, dgx1.all_gpus(), {.gpus = -3}).status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(Fit(dgx1, dgx1.all_gpus(), {.gpus = 9}).status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(Fit(dgx1, GpuSet::FromMask(0x100), {.gpus = 1}).status().code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("bandwidth parses and prints as users write it", "[allocator]") {
  CHECK(*ParseBandwidth("200GB/s") == 200'000);
  CHECK(*ParseBandwidth(" 1.5 TB/s ") == 1'500'000);
  CHECK(*ParseBandwidth("800mb/s") == 800);
  CHECK(*ParseBandwidth("50G") == 50'000);
  CHECK_FALSE(ParseBandwidth("fast").ok());
  CHECK_FALSE(ParseBandwidth("200").ok());
  CHECK_FALSE(ParseBandwidth("-5GB/s").ok());
  CHECK_FALSE(ParseBandwidth("1e400GB/s").ok());
  CHECK(FormatBandwidth(450'000) == "450GB/s");
  CHECK(FormatBandwidth(12'500) == "12.5GB/s");
}

// The objective written out plainly over every subset, with brute-force set quality.
std::optional<GpuSet> BruteForceBest(const Topology& topology, GpuSet free, const AllocationRequest& request) {
  const testing::BruteForceRing ring(topology);
  struct Scored {
    GpuSet set;
    int64_t mbps;
    LinkClass weakest;
    int64_t leftover;
  };
  std::optional<Scored> best;
  for (uint32_t mask = 1; mask < (1u << topology.gpu_count()); ++mask) {
    const GpuSet set = GpuSet::FromMask(mask);
    if (set.size() != request.gpus || !free.contains(set) || !set.contains(request.required)) continue;
    const Scored s{set, ring.Bandwidth(set), testing::BruteForceWeakest(topology, set),
                   testing::BruteForceCohesion(topology, free.without(set))};
    if (s.weakest > request.min_link) continue;
    if (request.gpus > 1 && s.mbps < request.min_bandwidth_mbps) continue;
    const auto key = [](const Scored& x) {
      std::vector<int> ids;
      for (GpuId id : x.set.ids()) ids.push_back(id.value);
      return std::make_tuple(-x.mbps, x.weakest, -x.leftover, ids);
    };
    if (!best || key(s) < key(*best)) best = s;
  }
  if (!best) return std::nullopt;
  return best->set;
}

// `mostly_free`: free sets drawn with most GPUs free, the expensive end of the search.
void CheckAgainstBruteForce(const Topology& topology, std::mt19937& rng, int cases, bool mostly_free = false) {
  const int n = topology.gpu_count();
  for (int c = 0; c < cases; ++c) {
    GpuSet free = GpuSet::FromMask(std::uniform_int_distribution<uint32_t>(1, (1u << n) - 1)(rng));
    if (mostly_free) free = free | GpuSet::FromMask(std::uniform_int_distribution<uint32_t>(0, (1u << n) - 1)(rng));
    AllocationRequest request;
    request.gpus = std::uniform_int_distribution<int>(1, free.size())(rng);
    if (c % 3 == 1) request.min_link = static_cast<LinkClass>(std::uniform_int_distribution<int>(1, 6)(rng));
    if (c % 3 == 2) request.min_bandwidth_mbps = std::uniform_int_distribution<int>(0, 60)(rng) * 1000;
    if (c % 4 == 3) {  // must include a random part of the set (the kubelet's must-include devices)
      for (GpuId id : free.ids()) {
        if (request.required.size() < request.gpus && rng() % 2 == 0) request.required = request.required.with(id);
      }
    }
    INFO("free {" << free.ToString() << "} k=" << request.gpus << " required {" << request.required.ToString() << "} min-link "
                  << LinkClassName(request.min_link) << " min-bw " << request.min_bandwidth_mbps);
    absl::StatusOr<FitResult> fit = Fit(topology, free, request);
    REQUIRE(fit.ok());
    const std::optional<GpuSet> expected = BruteForceBest(topology, free, request);
    REQUIRE(fit->fits() == expected.has_value());
    if (expected) REQUIRE(fit->chosen->gpus.ToString() == expected->ToString());
    REQUIRE(fit->fits() == fit->insufficient.empty());
  }
}

TEST_CASE("allocator equals the brute-force optimum on random free sets of every catalog shape",
          "[allocator][property]") {
  std::mt19937 rng(2026);
  for (absl::string_view name : CatalogShapeNames()) {
    absl::StatusOr<Topology> shape = CatalogShape(name);
    REQUIRE(shape.ok());
    INFO("shape " << name);
    // 16-GPU shapes: fewer cases, the brute force enumerates up to C(16, 8) sets per case.
    const int cases = shape->gpu_count() > 8 ? 40 : 150;
    CheckAgainstBruteForce(*shape, rng, cases);
    CheckAgainstBruteForce(*shape, rng, cases / 5, /*mostly_free=*/true);
  }
}

TEST_CASE("allocator equals the brute-force optimum on random nodes up to 16 GPUs", "[allocator][property]") {
  std::mt19937 rng(42);
  SECTION("up to 8 GPUs") {
    for (int trial = 0; trial < 40; ++trial) {
      const int n = 2 + trial % 7;
      const Topology t = trial % 2 ? testing::RandomTopology(n, rng) : testing::RandomServer(n, rng);
      CheckAgainstBruteForce(t, rng, 100);
    }
  }
  SECTION("12 and 16 GPUs") {
    for (int trial = 0; trial < 4; ++trial) {
      const int n = trial < 2 ? 12 : 16;
      const Topology t = trial % 2 ? testing::RandomTopology(n, rng) : testing::RandomServer(n, rng);
      CheckAgainstBruteForce(t, rng, 60);
      CheckAgainstBruteForce(t, rng, 15, /*mostly_free=*/true);
    }
  }
}

}  // namespace
}  // namespace topofit::topology
