#include "replay/comparison.h"

#include <catch2/catch.hpp>

#include "tests/replay/scenario.h"

namespace topofit::sim {
namespace {

using testing::Group;
using testing::Pod;

// Two pods on a group whose nodes take 3 to 10 minutes to come up: the seed decides when.
Workload TwoPods() {
  Workload workload;
  NodeGroupSpec group = Group("nvlink", "p4d.24xlarge", 8, 10, 2);
  group.provision_delay_min = 3 * kMinute;
  group.provision_delay_max = 10 * kMinute;
  workload.groups = {group};
  workload.pods = {Pod("a", 0, kHour, 8), Pod("b", 0, 2 * kHour, 8)};
  return workload;
}

TEST_CASE("Compare: each seed's summaries are its replays' over the workload's window", "[comparison]") {
  const std::vector<Policy> policies = {StockPolicy({StockExpander::kLeastWaste}),
                                        TunedPolicy("tuned", {StockExpander::kLeastWaste})};
  ComparisonOptions options;
  options.seeds = {1, 2};
  options.jobs = 2;
  options.keep_first_results = true;
  const absl::StatusOr<Comparison> comparison =
      Compare([](uint64_t) -> absl::StatusOr<Workload> { return TwoPods(); }, policies, options);
  REQUIRE(comparison.ok());
  REQUIRE(comparison->seeds.size() == 2);
  CHECK(comparison->seeds[0].results.size() == 2);  // the first seed's replays, kept for the plots
  CHECK(comparison->seeds[1].results.empty());
  for (const SeedComparison& seed : comparison->seeds) {
    INFO("seed " << seed.seed);
    for (size_t i = 0; i < policies.size(); ++i) {
      ReplayOptions replay;
      replay.seed = seed.seed;
      const absl::StatusOr<ReplayResult> alone = Replay(TwoPods(), policies[i], replay);
      REQUIRE(alone.ok());
      // T is the workload's: an hour after b would end if it started at once, whatever the seed drew.
      CHECK(seed.window.end == 3 * kHour);
      CHECK(alone->end < seed.window.end);
      const PolicySummary expected = Summarise(*alone, seed.window);
      CHECK(seed.summaries[i].seed == seed.seed);
      CHECK(seed.summaries[i].policy == policies[i].name);
      CHECK(seed.summaries[i].idle_gpu_hours == expected.idle_gpu_hours);
      CHECK(seed.summaries[i].cost_dollars == expected.cost_dollars);
      CHECK(seed.summaries[i].pending.p95_seconds == expected.pending.p95_seconds);
    }
  }
  // The seeds drew different provisioning delays, so the pods waited differently: a spread to report.
  CHECK(comparison->seeds[0].summaries[0].pending.p95_seconds != comparison->seeds[1].summaries[0].pending.p95_seconds);
}

TEST_CASE("Compare passes a workload's error on", "[comparison]") {
  ComparisonOptions options;
  const absl::StatusOr<Comparison> comparison =
      Compare([](uint64_t) -> absl::StatusOr<Workload> { return absl::NotFoundError("no trace"); },
              {StockPolicy({})}, options);
  CHECK(comparison.status().code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace topofit::sim
