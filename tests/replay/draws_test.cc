#include "replay/draws.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "replay/simulator.h"
#include "tests/replay/scenario.h"

namespace topofit::sim {
namespace {

TEST_CASE("Draws: a draw is a function of the seed, the purpose and the key, not of the draws before", "[draws]") {
  const Draws draws(7);
  const uint64_t first = draws.Bits(DrawPurpose::kBootDelay, {2, 3});
  for (int i = 0; i < 100; ++i) (void)draws.Bits(DrawPurpose::kSchedulerTie, {static_cast<uint64_t>(i), 1});
  CHECK(draws.Bits(DrawPurpose::kBootDelay, {2, 3}) == first);
  CHECK(Draws(7).Bits(DrawPurpose::kBootDelay, {2, 3}) == first);
  CHECK(Draws(8).Bits(DrawPurpose::kBootDelay, {2, 3}) != first);
  CHECK(draws.Bits(DrawPurpose::kBootFailure, {2, 3}) != first);
  CHECK(draws.Bits(DrawPurpose::kBootDelay, {3, 2}) != first);  // the key's order matters
}

TEST_CASE("Draws: Between stays in its bounds and reaches both, Unit spreads over 0 to 1", "[draws]") {
  const Draws draws(1);
  std::set<int64_t> seen;
  double sum = 0;
  const int n = 20'000;
  for (int i = 0; i < n; ++i) {
    const int64_t v = draws.Between(3, 10, DrawPurpose::kBootDelay, {static_cast<uint64_t>(i)});
    REQUIRE(v >= 3);
    REQUIRE(v <= 10);
    seen.insert(v);
    const double u = draws.Unit(DrawPurpose::kBootFailure, {static_cast<uint64_t>(i)});
    REQUIRE(u >= 0);
    REQUIRE(u < 1);
    sum += u;
  }
  CHECK(seen.size() == 8);
  CHECK(sum / n == Approx(0.5).margin(0.01));
  CHECK(draws.Between(5, 5, DrawPurpose::kBootDelay, {1}) == 5);
  CHECK(draws.Between(5, 2, DrawPurpose::kBootDelay, {1}) == 5);
}

// Common random numbers: two policies that make different choices still see the same boot delay for the
// k-th node of a group (before, one shared stream handed the draws out in decision order).
TEST_CASE("Replay: the k-th node of a group boots alike under every policy of a seed", "[draws]") {
  Workload workload;
  NodeGroupSpec nvlink = testing::Group("nvlink", "p4d.24xlarge", 8, 30, 6);
  NodeGroupSpec pcie = testing::Group("pcie", "g5.48xlarge", 8, 10, 6);
  for (NodeGroupSpec* group : {&nvlink, &pcie}) {
    group->provision_delay_min = 3 * kMinute;
    group->provision_delay_max = 10 * kMinute;
  }
  workload.groups = {nvlink, pcie};
  for (int i = 0; i < 6; ++i) {
    workload.pods.push_back(testing::NvPod("train-" + std::to_string(i), i * 20 * kMinute, kHour, 8));
    workload.pods.push_back(testing::Pod("infer-" + std::to_string(i), i * 7 * kMinute, kHour / 2, 2));
  }
  ReplayOptions options;
  options.seed = 3;
  std::map<std::pair<std::string, size_t>, SimTime> boot;  // (group, ordinal) -> delay
  int shared = 0;
  for (const Policy& policy : StandardPolicies({StockExpander::kLeastWaste})) {
    const absl::StatusOr<ReplayResult> result = Replay(workload, policy, options);
    REQUIRE(result.ok());
    std::map<std::string, size_t> ordinal;
    for (const NodeOutcome& node : result->nodes) {
      const size_t k = ordinal[node.group]++;
      if (node.ready < 0) continue;
      const auto [it, inserted] = boot.emplace(std::pair{node.group, k}, node.ready - node.requested);
      if (!inserted) {
        INFO(policy.name << ": " << node.group << " node " << k);
        CHECK(it->second == node.ready - node.requested);
        ++shared;
      }
    }
  }
  CHECK(shared > 5);
}

}  // namespace
}  // namespace topofit::sim
