#include "replay/summary.h"

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

#include "replay/policy.h"
#include "replay/workloads/lead_in.h"
#include "tests/replay/scenario.h"

namespace topofit::sim {
namespace {

using testing::Group;
using testing::Pod;

ReplayResult Stock(const Workload& workload) {
  absl::StatusOr<ReplayResult> result = Replay(workload, StockPolicy({StockExpander::kLeastWaste}), {});
  REQUIRE(result.ok());
  return *std::move(result);
}

// Two nodes of one group at $10/h, Ready 5 minutes after CA asks: one is up at 0 and busy with `filler`
// (8 GPUs, 2 minutes); `late` (8 GPUs, 1 hour) arrives with it and waits. CA, 30 s in (its wait for GPU
// pods), grows a second node for `late` — but `late` takes the first node when `filler` ends at 2:00,
// and the new node, Ready at 5:30, never runs anything.
Workload StrandedNode() {
  Workload workload;
  workload.groups = {Group("nvlink", "p4d.24xlarge", 8, 10, 2, 1)};
  workload.pods = {Pod("filler", 0, 2 * kMinute, 8), Pod("late", 0, kHour, 8)};
  return workload;
}

TEST_CASE("Two nodes by hand: the replay runs on until scale-down removed what it will", "[summary]") {
  const ReplayResult result = Stock(StrandedNode());
  REQUIRE(result.nodes.size() == 2);
  CHECK(result.pods[1].first_start == 2 * kMinute);
  CHECK(result.end == 62 * kMinute);  // late's completion: the replay's own end
  CHECK(result.nodes[1].requested == 30 * kSecond);
  CHECK(result.nodes[1].ready == 5 * kMinute + 30 * kSecond);
  // Unneeded from 5:30; CA waits 10 minutes after its scale-up (0:30) and 10 minutes unneeded: 15:30.
  CHECK(result.nodes[1].removed == 15 * kMinute + 30 * kSecond);
  // The first node, empty from 62:00, is removed at 72:00, after the last pod: the replay went on for it.
  CHECK(result.nodes[0].removed == 72 * kMinute);
}

TEST_CASE("Two nodes by hand: the window, over the replay's own end and over a longer one", "[summary]") {
  const ReplayResult result = Stock(StrandedNode());
  // [0, T = 62:00): node 0 for 62 minutes, node 1 for 15 minutes (0:30 to 15:30): 77 node-minutes.
  // Provisioned 8 x 77 / 60 = 10.267 GPU-hours; allocated 8 x (2 + 60) / 60 = 8.267; idle exactly 2.
  const PolicySummary own = Summarise(result);
  CHECK(own.window_hours == Approx(62.0 / 60));
  CHECK(own.provisioned_gpu_hours == Approx(8.0 * 77 / 60));
  CHECK(own.allocated_gpu_hours == Approx(8.0 * 62 / 60));
  CHECK(own.idle_gpu_hours == Approx(2.0));
  CHECK(own.node_hours == Approx(77.0 / 60));
  CHECK(own.cost_dollars == Approx(10.0 * 77 / 60));
  REQUIRE(own.by_group.size() == 1);  // both nodes are the one group's
  CHECK(own.by_group.at("nvlink").node_hours == Approx(77.0 / 60));
  CHECK(own.by_group.at("nvlink").cost_dollars == Approx(10.0 * 77 / 60));
  // Over [0, 2 h), as when another policy ran until then: node 0's 10 empty minutes before its removal
  // (62:00 to 72:00) add 8 x 10 / 60 = 1.333 idle GPU-hours, and nothing after.
  const PolicySummary longer = Summarise(result, MeasuringWindow{.end = 2 * kHour});
  CHECK(longer.window_hours == 2);
  CHECK(longer.idle_gpu_hours == Approx(2.0 + 8.0 * 10 / 60));
  CHECK(longer.cost_dollars == Approx(10.0 * 87 / 60));
  CHECK(longer.by_group.at("nvlink").cost_dollars == Approx(10.0 * 87 / 60));
  CHECK(longer.hours == Approx(62.0 / 60));  // the policy's own last pod, unchanged
}

TEST_CASE("Two nodes by hand: idle GPU-hours by reason, as topofit_idle_gpus classifies them", "[summary]") {
  const ReplayResult result = Stock(StrandedNode());
  // Samples at most once a minute after a change: 0:00 (nothing free), 1:00 (node 1, asked at 0:30,
  // booting: 8), 2:00 (the same: not a new sample), 5:30 (node 1 Ready, runs nothing: 8 awaiting scale-down;
  // `late` runs on node 0), 15:30 (node 1 removed: nothing free), 62:00 (node 0 empty: 8 awaiting scale-down),
  // 72:00 (removed).
  using history::IdleReason;
  const auto gpus = [](int booting, int awaiting) {
    history::IdleCounts counts{};
    counts[static_cast<size_t>(IdleReason::kBooting)] = booting;
    counts[static_cast<size_t>(IdleReason::kAwaitingScaleDown)] = awaiting;
    return counts;
  };
  std::vector<std::pair<SimTime, history::IdleCounts>> samples;
  for (const IdleSample& sample : result.idle_samples) samples.emplace_back(sample.at, sample.gpus);
  CHECK(samples == std::vector<std::pair<SimTime, history::IdleCounts>>{
                       {0, gpus(0, 0)},
                       {kMinute, gpus(8, 0)},
                       {5 * kMinute + 30 * kSecond, gpus(0, 8)},
                       {15 * kMinute + 30 * kSecond, gpus(0, 0)},
                       {62 * kMinute, gpus(0, 8)},
                       {72 * kMinute, gpus(0, 0)}});

  // [0, 62:00): booting 8 x (5:30 - 1:00) = 8 x 4.5 / 60 = 0.6 h; awaiting scale-down 8 x 10 / 60 = 1.333 h.
  // Their sum falls short of the exact idle 2.0 h by the sampling lag: 8 GPUs x 0:30 = 0.067 h.
  const PolicySummary own = Summarise(result);
  CHECK(own.idle_booting_gpu_hours == Approx(0.6));
  CHECK(own.idle_awaiting_scale_down_gpu_hours == Approx(8.0 * 10 / 60));
  CHECK(own.idle_held_for_intent_gpu_hours == 0);
  CHECK(own.idle_fragmented_gpu_hours == 0);
  CHECK(own.idle_no_demand_gpu_hours == 0);
  // Over [0, 2 h): node 0's empty 10 minutes before its removal add 1.333 h awaiting scale-down.
  const PolicySummary longer = Summarise(result, MeasuringWindow{.end = 2 * kHour});
  CHECK(longer.idle_awaiting_scale_down_gpu_hours == Approx(2 * 8.0 * 10 / 60));
}

TEST_CASE("Two nodes by hand: completion time, from creation to the end of the run", "[summary]") {
  const ReplayResult result = Stock(StrandedNode());
  // filler runs 0:00-2:00, late waits for it and runs 2:00-62:00: (2 + 62) / 2 = 32 minutes.
  const PolicySummary summary = Summarise(result);
  REQUIRE(summary.completion_by_gpus.count(8) == 1);
  CHECK(summary.completion_by_gpus.at(8).pods == 2);
  CHECK(summary.completion_by_gpus.at(8).mean_hours == Approx(32.0 / 60));
}

TEST_CASE("Completion time: a pod not done counts as done at T, a replica has none", "[summary]") {
  ReplayResult result;
  PodOutcome done;
  done.gpus = 2;
  done.first_start = 10 * kMinute;
  done.ideal_duration = done.done = 70 * kMinute;
  PodOutcome running = done;  // arrived at 0:30, started, not done by T
  running.arrival = 30 * kMinute;
  running.done = -1;
  PodOutcome replica = done;
  replica.runs_until_deleted = true;
  result.pods = {done, running, replica};
  const PolicySummary summary = Summarise(result, MeasuringWindow{.end = 2 * kHour});
  // (70 + (120 - 30)) / 2 = 80 minutes over two pods; the replica counts nowhere.
  REQUIRE(summary.completion_by_gpus.count(2) == 1);
  CHECK(summary.completion_by_gpus.at(2).pods == 2);
  CHECK(summary.completion_by_gpus.at(2).mean_hours == Approx(80.0 / 60));
}

TEST_CASE("IntegrateIdle holds each sample until the next, the last until the window's end", "[summary]") {
  history::IdleCounts four{}, two{};
  four[static_cast<size_t>(history::IdleReason::kFragmented)] = 4;
  two[static_cast<size_t>(history::IdleReason::kNoDemand)] = 2;
  const std::vector<IdleSample> samples = {{0, four}, {30 * kMinute, two}};
  // [15 min, 2 h): fragmented 4 x 15 min = 1 h; no demand 2 x 90 min = 3 h.
  const IdleGpuHours hours = IntegrateIdle(samples, 15 * kMinute, 2 * kHour);
  CHECK(hours[static_cast<size_t>(history::IdleReason::kFragmented)] == Approx(1.0));
  CHECK(hours[static_cast<size_t>(history::IdleReason::kNoDemand)] == Approx(3.0));
  CHECK(IntegrateIdle(samples, 0, 0)[static_cast<size_t>(history::IdleReason::kFragmented)] == 0);
  CHECK(IntegrateIdle({}, 0, kHour) == IdleGpuHours{});
}

// Two groups: a g5 node up at 0 at $16.29/h, busy with `first` for an hour; `second` arrives with it, and
// CA, 30 s in, grows the p4d group ($32.77/h), whose node is Ready at 5:30 and runs `second` to 65:30 (T).
TEST_CASE("Cost by node group: each group's nodes, the rows adding up to cost and node-hours", "[summary]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 1, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 1)};
  workload.pods = {Pod("first", 0, kHour, 8), Pod("second", 0, kHour, 8)};
  const PolicySummary s = Summarise(Stock(workload));
  CHECK(s.window_hours == Approx(65.5 / 60));
  REQUIRE(s.by_group.size() == 2);
  CHECK(s.by_group.at("pcie").node_hours == Approx(65.5 / 60));
  CHECK(s.by_group.at("pcie").cost_dollars == Approx(16.29 * 65.5 / 60));
  CHECK(s.by_group.at("nvlink").node_hours == Approx(65.0 / 60));
  CHECK(s.by_group.at("nvlink").cost_dollars == Approx(32.77 * 65.0 / 60));
  CHECK(s.by_group.at("pcie").cost_dollars + s.by_group.at("nvlink").cost_dollars == Approx(s.cost_dollars));
  CHECK(s.by_group.at("pcie").node_hours + s.by_group.at("nvlink").node_hours == Approx(s.node_hours));
}

TEST_CASE("Two nodes by hand: node-level stranding", "[summary]") {
  const PolicySummary empty = Summarise(Stock(StrandedNode()));
  CHECK(empty.scale_ups == 1);
  CHECK(empty.stranded_scale_ups == 1);
  CHECK(empty.overtaken_scale_ups == 1);  // "late" started on the first node at 2:00; the new one was Ready at 5:30
  CHECK(empty.new_nodes == 1);
  CHECK(empty.stranded_nodes == 1);
  CHECK(empty.empty_stranded_nodes == 1);
  // From its request (0:30) to its removal (15:30): no pod ever ran on it.
  CHECK(empty.stranded_node_hours == Approx(0.25));

  // A 1-GPU pod arriving at 5:40 finds room only on the new node: the node served a pod, but not the one it
  // was grown for — still stranded, no longer empty; paid for from 0:30 until 5:40 before serving anything.
  Workload other = StrandedNode();
  other.pods.push_back(Pod("other", 5 * kMinute + 40 * kSecond, 10 * kMinute, 1));
  const PolicySummary used = Summarise(Stock(other));
  CHECK(used.stranded_nodes == 1);
  CHECK(used.empty_stranded_nodes == 0);
  CHECK(used.stranded_node_hours == Approx((5 * 60 + 10) / 3600.0));
}

TEST_CASE("Two nodes by hand: a new node asked for after the window's end costs nothing and is still new", "[summary]") {
  // Over [0, 0:20): node 0's 20 seconds are the group's spend; node 1, asked for at 0:30, has none in the
  // window, yet is still counted among the new nodes and, never running its pod, among the stranded ones,
  // with no stranded hours inside the window (one pass over the nodes makes both tallies).
  const PolicySummary s = Summarise(Stock(StrandedNode()), MeasuringWindow{.end = 20 * kSecond});
  REQUIRE(s.by_group.size() == 1);
  CHECK(s.by_group.at("nvlink").node_hours == Approx(20.0 / 3600));
  CHECK(s.by_group.at("nvlink").cost_dollars == Approx(10.0 * 20 / 3600));
  CHECK(s.new_nodes == 1);
  CHECK(s.stranded_nodes == 1);
  CHECK(s.empty_stranded_nodes == 1);
  CHECK(s.stranded_node_hours == 0);
}

TEST_CASE("A node that served the pod it was grown for is not stranded", "[summary]") {
  Workload workload;
  workload.groups = {Group("nvlink", "p4d.24xlarge", 8, 10, 2)};
  workload.pods = {Pod("train", 0, kHour, 8)};
  const PolicySummary summary = Summarise(Stock(workload));
  CHECK(summary.new_nodes == 1);
  CHECK(summary.stranded_nodes == 0);
  CHECK(summary.stranded_node_hours == 0);
}

TEST_CASE("The window is the workload's: an hour past its ideal end, busy from 1% of the arrivals, fill to an hour "
          "past the last", "[summary]") {
  Workload workload;
  for (int i = 199; i >= 0; --i) workload.pods.push_back(Pod(absl::StrCat("p", i), i * kMinute, kHour, 1));
  workload.pods.back().duration = 10 * kHour;  // the first to arrive ends last: at 10 h
  const MeasuringWindow window = WindowOf(workload);
  CHECK(window.end == 11 * kHour);
  CHECK(window.busy_from == kMinute);  // rank ceil(1% x 200) = 2: the second arrival, at 1 minute, in any order
  CHECK(window.fill_from == 0);
  CHECK(window.fill_end == 199 * kMinute + kHour);
  // Whatever the policies do: no replay result goes into it.
  workload.pods.back().duration = kHour;
  CHECK(WindowOf(workload).end == 199 * kMinute + 2 * kHour);
}

TEST_CASE("The fill counts idle GPUs and cost from the first arrival to an hour after the last", "[summary]") {
  ReplayResult result;
  result.end = 5 * kHour;
  result.timeline = {{0, 8, 0, 0, 1, 10.0}, {2 * kHour, 8, 8, 0, 1, 10.0}, {3 * kHour, 8, 0, 0, 1, 10.0}};
  PodOutcome pod;
  pod.arrival = 2 * kHour;
  result.pods = {pod};
  MeasuringWindow window;
  window.end = 5 * kHour;
  window.fill_from = 2 * kHour;
  window.fill_end = 3 * kHour + 30 * kMinute;
  const PolicySummary s = Summarise(result, window);
  CHECK(s.fill_idle_gpu_hours == Approx(4));  // 8 GPUs idle from 3 h to 3.5 h
  CHECK(s.fill_idle_share == Approx(4.0 / 12));
  CHECK(s.fill_cost_dollars == Approx(15));
  CHECK(s.idle_gpu_hours == Approx(32));  // 2 h before the pod and 2 h after it
  CHECK(s.fill_end_hours == Approx(3.5));
}

// A service replica running when the trace begins (arrival 0, until deleted, 2 h) and a batch pod a minute
// in, both 8 GPUs, with a 30-minute lead-in: the replica still arrives at 0 and ends when the trace says
// (now 2 h 30), the batch pod arrives at 31:00, and measuring begins at 30:00. CA grows a node for each
// (requested 30 s after the arrival, Ready 5 minutes later); only the batch pod's wait and scale-up are
// counted, and the replica's node from 30:00 on.
TEST_CASE("A lead-in: the first arrivals ran before measuring, which counts the rest from the lead-in's end",
          "[summary][lead_in]") {
  Workload workload;
  workload.groups = {Group("nvlink", "p4d.24xlarge", 8, 10, 2)};
  PodSpec service = Pod("service", 0, 2 * kHour, 8);
  service.runs_until_deleted = true;
  workload.pods = {service, Pod("batch", kMinute, 30 * kMinute, 8)};
  const Workload led = WithLeadIn(workload, 30 * kMinute);
  REQUIRE(led.pods.size() == 2);
  CHECK(led.pods[0].arrival == 0);
  CHECK(led.pods[0].duration == 2 * kHour + 30 * kMinute);
  CHECK(led.pods[1].arrival == 31 * kMinute);
  CHECK(led.pods[1].duration == 30 * kMinute);
  CHECK(led.measure_from == 30 * kMinute);
  CHECK(WithLeadIn(workload, 0).measure_from == 0);

  const ReplayResult result = Stock(led);
  REQUIRE(result.nodes.size() == 2);
  REQUIRE(result.nodes[0].requested == 30 * kSecond);
  const MeasuringWindow window = WindowOf(led);
  CHECK(window.from == 30 * kMinute);
  CHECK(window.busy_from == 31 * kMinute);
  CHECK(window.fill_from == 31 * kMinute);
  const PolicySummary s = Summarise(result, window);
  CHECK(s.measure_from_hours == Approx(0.5));
  CHECK(s.pods == 1);
  CHECK(s.pending.p95_seconds == Approx(330));  // the batch pod: 30 s to CA's scale-up, 5 minutes to Ready
  CHECK(s.scale_ups == 1);
  CHECK(s.new_nodes == 1);
  // The ideal GPU-hours from 30:00 at $10 / 8 GPUs an hour: the replica's 2 h and the batch pod's half hour.
  CHECK(s.lower_bound_cost_dollars == Approx(8 * (2.0 + 0.5) * 10 / 8));
  // Measured from 0 instead, the replica's node adds its first 29.5 minutes.
  MeasuringWindow from_zero = window;
  from_zero.from = 0;
  CHECK(Summarise(result, from_zero).cost_dollars - s.cost_dollars == Approx(10 * 29.5 / 60));
  CHECK(Summarise(result, from_zero).pods == 2);
}

}  // namespace
}  // namespace topofit::sim
