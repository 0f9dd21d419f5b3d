#include "decision/headroom_plan.h"

#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakePod;

const absl::Time kStart = absl::UnixEpoch() + absl::Hours(1000);

absl::Time At(absl::Duration since_start) { return kStart + since_start; }

HeadroomShape Shape(int gpus) { return HeadroomShape{.gpus = gpus, .min_link = "", .min_bandwidth = "", .topology_policy = "", .family = ""}; }

// Feeds one observation per 10 s from `from` to `to` of `live(t)` pods of `shape`.
template <typename Live>
void Feed(HeadroomPlanner& planner, const HeadroomShape& shape, absl::Duration from, absl::Duration to, Live live) {
  for (absl::Duration t = from; t < to; t += absl::Seconds(10)) planner.ObserveLive(At(t), {{shape, live(t)}});
}

TEST_CASE("A pod's headroom shape is its GPU count, the topology it asks and the products it may run on",
          "[headroom]") {
  const kube::Pod pod = MakePod()
                            .gpus(4)
                            .annotation("topofit.io/min-link", "NV")
                            .annotation("topofit.io/topology-policy", "required")
                            .requiredTerm(kube::testing::TermBuilder().expression(
                                {"nvidia.com/gpu.product", kube::NodeSelectorOperator::kIn, {"NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"}}));
  const std::optional<HeadroomShape> shape = HeadroomShapeOf(pod);
  REQUIRE(shape.has_value());
  CHECK(shape->gpus == 4);
  CHECK(shape->min_link == "NV");
  CHECK(shape->topology_policy == "required");
  CHECK(shape->family == "NVIDIA-A100-SXM4-80GB+NVIDIA-H100-80GB-HBM3");
  CHECK(shape->Name() == "4gpu-nv-required-nvidia-a100-sxm4-80gb+nvidia-h100-80gb-hbm3");
  CHECK(HeadroomShapeOf(MakePod().gpus(1).nodeSelector("nvidia.com/gpu.product", "Tesla-T4"))->family == "Tesla-T4");
  CHECK_FALSE(HeadroomShapeOf(MakePod().container(kube::testing::MakeContainer("main").cpu("2"))).has_value());
}

TEST_CASE("Steady demand needs no headroom, however high", "[headroom]") {
  HeadroomPlanner planner({});
  Feed(planner, Shape(1), absl::ZeroDuration(), absl::Hours(1), [](absl::Duration) { return 40; });
  CHECK(planner.Targets(At(absl::Hours(1))).empty());
  CHECK(planner.Plan(At(absl::Hours(1))).empty());
}

TEST_CASE("The cover of a fill rate is the smallest buffer serving that share of the pods that rose", "[headroom]") {
  CHECK(FillRateCover({}, 0.95) == 0);
  CHECK(FillRateCover({0, 0, 0}, 0.95) == 0);
  CHECK(FillRateCover({0, 10}, 1.0) == 10);
  CHECK(FillRateCover({0, 10}, 0.5) == 5);
  CHECK(FillRateCover({2, 2, 2, 20}, 1.0) == 20);
  CHECK(FillRateCover({2, 2, 2, 20}, 0.5) == 7);  // 2 + 2 + 2 + 7 = 13 of the 26 pods that rose
  std::mt19937 random(11);
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<int> rises(1 + random() % 30);
    for (int& rise : rises) rise = static_cast<int>(random() % 25);
    std::sort(rises.begin(), rises.end());
    const double fill = static_cast<double>(random() % 101) / 100.0;
    auto covered = [&](int cover) {
      int64_t sum = 0;
      for (int rise : rises) sum += std::min(rise, cover);
      return sum;
    };
    int64_t total = 0;
    for (int rise : rises) total += rise;
    const int cover = FillRateCover(rises, fill);
    INFO("trial " << trial << " fill " << fill << " cover " << cover);
    if (total == 0) {
      CHECK(cover == 0);
      continue;
    }
    REQUIRE(static_cast<double>(covered(cover)) >= fill * static_cast<double>(total) - 1e-9);
    if (cover > 0) REQUIRE(static_cast<double>(covered(cover - 1)) < fill * static_cast<double>(total) - 1e-9);
  }
}

TEST_CASE("Bursts that come often are covered first, rare large ones only at a high fill rate", "[headroom]") {
  const HeadroomShape shape = Shape(2);
  // Every 10 minutes a burst of 6 pods arrives within a minute and runs 3 minutes; once an hour one of 20.
  auto live = [](absl::Duration t) {
    const int64_t minute = absl::ToInt64Minutes(t);
    const int64_t into = minute % 10;
    if (into > 3) return 0;
    return minute % 60 == 30 ? 20 : 6;
  };
  // Of the last hour's 60 one-minute buckets, those within a boot (10 min) before a burst see it rise: most
  // see a rise of 6, the ten before the large burst one of 20.
  HeadroomPlanner all(HeadroomConfig{.quantile = 1.0});
  Feed(all, shape, absl::ZeroDuration(), absl::Hours(2), live);
  CHECK(all.Targets(At(absl::Hours(2)))[shape] == 20);
  HeadroomPlanner most(HeadroomConfig{.quantile = 0.7});
  Feed(most, shape, absl::ZeroDuration(), absl::Hours(2), live);
  const int cover = most.Targets(At(absl::Hours(2)))[shape];
  CHECK(cover >= 6);
  CHECK(cover < 20);
}

TEST_CASE("Only the rise within one boot counts: a slow ramp needs one replica per boot", "[headroom]") {
  const HeadroomShape shape = Shape(1);
  HeadroomPlanner planner(HeadroomConfig{.quantile = 1.0});
  // One more pod every 10 minutes, and nodes boot in 5: no boot ever sees more than one new pod.
  for (int b = 0; b < 20; ++b) planner.ObserveBoot(absl::Minutes(5));
  REQUIRE(planner.Boot() == absl::Minutes(5));
  Feed(planner, shape, absl::ZeroDuration(), absl::Hours(2), [](absl::Duration t) { return 1 + static_cast<int>(absl::ToInt64Minutes(t) / 10); });
  CHECK(planner.Targets(At(absl::Hours(2)))[shape] == 1);
}

TEST_CASE("The boot covered is nearly the slowest of the boots seen, the default before any", "[headroom]") {
  HeadroomPlanner planner(HeadroomConfig{.quantile = 0.5, .default_boot = absl::Minutes(7)});
  CHECK(planner.Boot() == absl::Minutes(7));
  for (int minutes = 1; minutes <= 40; ++minutes) planner.ObserveBoot(absl::Minutes(minutes));
  CHECK(planner.Boot() == absl::Minutes(38));  // the 95th percentile, whatever the fill rate
}

TEST_CASE("A shape that appears later rose from none, the pods there at the first look are not a burst",
          "[headroom]") {
  HeadroomPlanner planner(HeadroomConfig{.quantile = 1.0});
  const HeadroomShape steady = Shape(1), late = Shape(2);
  planner.ObserveLive(At(absl::ZeroDuration()), {{steady, 30}});
  CHECK(planner.Targets(At(absl::ZeroDuration())).empty());
  planner.ObserveLive(At(absl::Minutes(3)), {{steady, 30}, {late, 4}});
  const std::map<HeadroomShape, int> targets = planner.Targets(At(absl::Minutes(3)));
  CHECK(targets.size() == 1);
  CHECK(targets.at(late) == 4);
}

TEST_CASE("A buffer grows at once and shrinks only after its target stayed lower for the shrink delay", "[headroom]") {
  const HeadroomShape shape = Shape(1);
  HeadroomConfig config;
  config.quantile = 0.95;
  config.window = absl::Minutes(30);
  config.shrink_after = absl::Minutes(20);
  HeadroomPlanner planner(config);
  // A burst of 8 at minute 5, then nothing: the rise leaves the window after 30 minutes.
  int changes = 0, last = 0, shrunk_at = -1;
  for (int second = 0; second < 3 * 3600; second += 10) {
    const absl::Duration t = absl::Seconds(second);
    planner.ObserveLive(At(t), {{shape, t >= absl::Minutes(5) && t < absl::Minutes(8) ? 8 : 0}});
    const std::map<HeadroomShape, int> plan = planner.Plan(At(t));
    const int now = plan.contains(shape) ? plan.at(shape) : 0;
    if (now != last) {
      ++changes;
      if (now < last && shrunk_at < 0) shrunk_at = second / 60;
    }
    last = now;
  }
  CHECK(last == 0);
  CHECK(changes == 2);  // up to 8 when the burst is seen, down to 0 once
  // The buckets that saw the rise (the five before the burst) leave the 30-minute window from minute 30 on,
  // and the target falls once too few are left to reach the 95th percentile (minute 33); the buffer follows
  // 20 minutes later.
  CHECK(shrunk_at >= 50);
  CHECK(shrunk_at <= 55);
}

TEST_CASE("Bursts closer together than the shrink delay never make a buffer flap", "[headroom]") {
  const HeadroomShape shape = Shape(4);
  HeadroomConfig config;
  config.quantile = 1.0;
  config.window = absl::Minutes(15);
  config.shrink_after = absl::Minutes(20);
  HeadroomPlanner planner(config);
  int changes = 0, last = 0;
  for (int second = 0; second < 6 * 3600; second += 10) {
    const absl::Duration t = absl::Seconds(second);
    // A burst of 5 every 18 minutes, for two minutes: the target comes and goes with the 15-minute window.
    const bool burst = (second / 60) % 18 < 2;
    planner.ObserveLive(At(t), {{shape, burst ? 5 : 0}});
    const std::map<HeadroomShape, int> plan = planner.Plan(At(t));
    const int now = plan.contains(shape) ? plan.at(shape) : 0;
    changes += now != last;
    last = now;
  }
  CHECK(planner.Targets(At(absl::Hours(6) - absl::Minutes(1))).empty());  // the target did fall to 0
  CHECK(changes == 1);                                                    // the buffer never did
  CHECK(last == 5);
}

TEST_CASE("A budget keeps the replicas most likely used per GPU, never more GPUs than it allows", "[headroom]") {
  std::mt19937 random(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::map<HeadroomShape, int> wanted;
    std::map<HeadroomShape, std::vector<int>> rises;
    const int shapes = 1 + static_cast<int>(random() % 3);
    const bool unit = trial % 2 == 0;  // every shape of one GPU: the greedy keep is then the best one
    for (int s = 0; s < shapes; ++s) {
      const HeadroomShape shape = Shape(unit ? 1 : 1 << (random() % 4));
      std::vector<int>& seen = rises[HeadroomShape{shape.gpus, "", "", "", std::to_string(s)}];
      for (int i = 0; i < 20; ++i) seen.push_back(static_cast<int>(random() % 6));
      std::sort(seen.begin(), seen.end());
      wanted[HeadroomShape{shape.gpus, "", "", "", std::to_string(s)}] = 1 + static_cast<int>(random() % 5);
    }
    const int budget = 1 + static_cast<int>(random() % 24);
    const std::map<HeadroomShape, int> kept = WithinBudget(wanted, rises, budget);
    auto chance = [&](const HeadroomShape& shape, int k) {
      const std::vector<int>& seen = rises[shape];
      return static_cast<double>(std::count_if(seen.begin(), seen.end(), [&](int r) { return r >= k; })) / 20.0;
    };
    int used = 0;
    double value = 0;
    for (const auto& [shape, count] : kept) {
      REQUIRE(count <= wanted[shape]);
      used += count * shape.gpus;
      for (int k = 1; k <= count; ++k) value += chance(shape, k);
    }
    REQUIRE(used <= budget);
    // Nothing dropped would still fit.
    for (const auto& [shape, count] : wanted) {
      const int left = count - (kept.contains(shape) ? kept.at(shape) : 0);
      if (left > 0) REQUIRE(used + shape.gpus > budget);
    }
    if (!unit) continue;
    // One GPU each: brute force over every count per shape finds no better expected use.
    std::vector<std::pair<HeadroomShape, int>> list(wanted.begin(), wanted.end());
    double best = 0;
    std::vector<int> counts(list.size(), 0);
    while (true) {
      int gpus = 0;
      double v = 0;
      for (size_t i = 0; i < list.size(); ++i) {
        gpus += counts[i];
        for (int k = 1; k <= counts[i]; ++k) v += chance(list[i].first, k);
      }
      if (gpus <= budget) best = std::max(best, v);
      size_t i = 0;
      while (i < list.size() && ++counts[i] > list[i].second) counts[i++] = 0;
      if (i == list.size()) break;
    }
    REQUIRE(value == Approx(best));
  }
}

}  // namespace
}  // namespace topofit::decision
