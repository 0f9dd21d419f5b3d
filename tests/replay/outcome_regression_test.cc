// The outcome regression test (issues 12 and 31): on small, deterministic replays of the synthetic generator, the
// Alibaba openb trace and the Azure LLM trace, topofit must not do worse than the tuned stock baseline —
// kube-scheduler with MostAllocated over cpu, memory and nvidia.com/gpu, the node affinity an operator
// writes for pods that require a topology, CA's least-waste expander — beyond a stated margin on any of:
//   idle GPU-hours (margin 5%), cost (5%), p95 pending time of multi-GPU pods (10%, and at least 30 s),
//   slowdown GPU-hours (10%: the run time multi-GPU pods lose to their sets);
// each the mean over seeds 1-3 of figures measured over the comparison's common window [0, T]. And where
// openb's multi-GPU pods say their run time, in the FGD paper's mode (the burst where pods ask for
// capacity), CA's scale-down must not evict topofit's multi-GPU pods much more often than tuned's, and
// topofit's multi-GPU pods must complete no later on average than without its waits for capacity.
//
// And issue 31's bar, against every tuned configuration an operator could pick (CA's random, least-waste,
// price and priority expanders in the tuned world): no tuned configuration at least 3% better than topofit
// on idle GPU-hours and on cost at once (undominated), and topofit's idle and cost each at most 5% above
// the best tuned configuration's (the one with the lowest mean of that figure); the FGD
// paper's mode is judged over the fill (the first arrival to an hour after the last).
//
// A case that fails today is marked [!shouldfail] with its reason: Catch2 then reports it as an expected
// failure, and reports it as a FAILURE the day it passes, so the mark must be removed with the fix.
// All cases run in one process (one CTest test) so that each workload is replayed once. The traces are read
// in place from ../shared (TOPOFIT_SHARED_DIR): without them a trace case says it skipped (and fails under
// CI), and an expected failure that skipped is reported as an unexpected pass — this test needs the traces.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "replay/comparison.h"
#include "replay/operator_tuning.h"
#include "replay/policy.h"
#include "replay/seeds.h"
#include "replay/workloads/azure_llm.h"
#include "replay/workloads/declared_runtimes.h"
#include "replay/workloads/gangs.h"
#include "replay/workloads/openb.h"
#include "replay/workloads/synthetic.h"
#include "tests/replay/workloads/workload_testing.h"

namespace topofit::sim {
namespace {

constexpr double kIdleMargin = 0.05;
constexpr double kCostMargin = 0.05;
constexpr double kPendingMargin = 0.10;
constexpr double kSlowdownMargin = 0.10;
constexpr double kRegretMargin = 0.05;     // against the best tuned configuration
constexpr double kDominanceMargin = 0.03;  // a tuned configuration this much better on both dominates
constexpr double kPendingFloorSeconds = 30;  // below this a p95 difference is one CA loop or two
constexpr uint64_t kSeeds[] = {1, 2, 3};
constexpr int64_t kSyntheticPods = 2000;
// Multi-GPU pods evicted by CA's scale-down: topofit's at most twice tuned's, or tuned's + 10 when few.
constexpr int kEvictionFloor = 10;

// Means over the seeds of the figures the test holds topofit to.
struct Outcome {
  double idle_gpu_hours = 0;
  double cost_dollars = 0;
  double multi_gpu_p95_seconds = 0;
  double evicted_multi_gpu_pods = 0;
  double slowdown_gpu_hours = 0;
  double multi_gpu_completion_hours = 0;  // mean over the multi-GPU pods that run to completion
  double fill_idle_gpu_hours = 0;
  double fill_cost_dollars = 0;
  double split_gangs = 0;
  double partial_gang_gpu_hours = 0;
  double gang_p95_seconds = 0;
};

struct Outcomes {
  Outcome tuned, topofit;
  Outcome topofit_no_wait;  // replayed for openb-paper-declared only
  // Every tuned configuration's, by name, and the best of them figure by figure (idle, cost and their fill
  // figures only); replayed for the workloads issue 31's bar is checked on.
  std::map<std::string, Outcome> tuned_sweep;
  Outcome best_tuned;
};

// The mean completion time of a replay's multi-GPU pods, every size together.
double MultiGpuCompletionHours(const PolicySummary& summary) {
  double hours = 0;
  int pods = 0;
  for (const auto& [gpus, completion] : summary.completion_by_gpus) {
    if (gpus < 2) continue;
    hours += completion.mean_hours * completion.pods;
    pods += completion.pods;
  }
  return pods > 0 ? hours / pods : 0;
}

Outcome MeanOf(const Comparison& comparison, size_t policy) {
  std::vector<double> idle, cost, p95, evicted, slowdown, completion, fill_idle, fill_cost, split, partial, gang_p95;
  for (const SeedComparison& seed : comparison.seeds) {
    idle.push_back(seed.summaries[policy].idle_gpu_hours);
    cost.push_back(seed.summaries[policy].cost_dollars);
    p95.push_back(seed.summaries[policy].pending_multi_gpu.p95_seconds);
    evicted.push_back(seed.summaries[policy].evicted_multi_gpu_pods);
    slowdown.push_back(seed.summaries[policy].slowdown_gpu_hours);
    completion.push_back(MultiGpuCompletionHours(seed.summaries[policy]));
    fill_idle.push_back(seed.summaries[policy].fill_idle_gpu_hours);
    fill_cost.push_back(seed.summaries[policy].fill_cost_dollars);
    split.push_back(seed.summaries[policy].split_gangs);
    partial.push_back(seed.summaries[policy].partial_gang_gpu_hours);
    gang_p95.push_back(seed.summaries[policy].gang_pending.p95_seconds);
  }
  return {SpreadOf(idle).mean,      SpreadOf(cost).mean,      SpreadOf(p95).mean,     SpreadOf(evicted).mean,
          SpreadOf(slowdown).mean,  SpreadOf(completion).mean, SpreadOf(fill_idle).mean, SpreadOf(fill_cost).mean,
          SpreadOf(split).mean,     SpreadOf(partial).mean,   SpreadOf(gang_p95).mean};
}

// Of the tuned configurations, the one with the lowest mean of each figure (idle, cost and their fill
// figures only), figure by figure: the configuration an operator who knew the workload would have picked.
Outcome BestOf(const std::map<std::string, Outcome>& tuned) {
  const auto lowest = [&](double Outcome::*figure) {
    double value = tuned.begin()->second.*figure;
    for (const auto& [name, outcome] : tuned) value = std::min(value, outcome.*figure);
    return value;
  };
  Outcome best;
  best.idle_gpu_hours = lowest(&Outcome::idle_gpu_hours);
  best.cost_dollars = lowest(&Outcome::cost_dollars);
  best.fill_idle_gpu_hours = lowest(&Outcome::fill_idle_gpu_hours);
  best.fill_cost_dollars = lowest(&Outcome::fill_cost_dollars);
  return best;
}

// The traces are read in place; without them a case says it skipped, and fails under CI.
bool TracesPresent(const std::filesystem::path& dir) {
  if (std::filesystem::exists(dir)) return true;
  if (std::getenv("CI") != nullptr) FAIL("no trace at " << dir.string() << " (set TOPOFIT_SHARED_DIR)");
  WARN("skipped: no trace at " << dir.string() << " (set TOPOFIT_SHARED_DIR)");
  return false;
}

std::filesystem::path TracesDir() { return testing::SharedDir() / "traces"; }

// tuned and topofit on the workload, once per process.
const Outcomes& Replayed(const std::string& name) {
  static std::map<std::string, Outcomes> cache;
  if (const auto it = cache.find(name); it != cache.end()) return it->second;
  const WorkloadForSeed workload = [&](uint64_t seed) -> absl::StatusOr<Workload> {
    if (name == "gangs") {
      GangsOptions options;
      options.seed = seed;
      return GenerateGangs(options);
    }
    if (name == "synthetic") {
      SyntheticOptions options;
      options.pod_count = kSyntheticPods;
      options.seed = seed;
      return GenerateSynthetic(options);
    }
    if (name.starts_with("openb")) {
      OpenbOptions options;
      options.trace_dir = (TracesDir() / std::string(kOpenbFolder)).string();
      if (name == "openb") return LoadOpenb(options);
      options.fixed_interarrival = kSecond;  // `--openb-interval 1`
      absl::StatusOr<Workload> paper = LoadOpenb(options);
      if (paper.ok() && name == "openb-paper-declared") DeclareRuntimes(*paper);
      return paper;
    }
    AzureLlmOptions options;
    options.trace_dir = (TracesDir() / std::string(kAzureLlmFolder)).string();
    return LoadAzureLlm(options);
  };
  ComparisonOptions options;
  options.seeds.assign(std::begin(kSeeds), std::end(kSeeds));
  options.jobs = 2;
  // Where pods say their run time, topofit without its waits too: what waiting buys.
  const bool declared = name == "openb-paper-declared";
  // Elsewhere every tuned configuration, the priority expander preferring the NVLink groups as the bench's
  // does.
  absl::StatusOr<Workload> first = workload(kSeeds[0]);
  REQUIRE(first.ok());
  absl::StatusOr<std::vector<GroupState>> groups = BuildGroups(first->groups);
  REQUIRE(groups.ok());
  absl::StatusOr<ExpanderPriorities> priorities = ParseExpanderPriorities(NvlinkPrioritiesYaml(*groups));
  REQUIRE(priorities.ok());
  const absl::StatusOr<std::vector<Policy>> policies =
      SelectPolicies({.baselines = declared ? "tuned" : "sweep",
                      .policies = declared ? "topofit,topofit-no-wait" : "topofit",
                      .chain = {StockExpander::kLeastWaste}},
                     *priorities);
  REQUIRE(policies.ok());
  absl::StatusOr<Comparison> comparison = Compare(workload, *policies, options);
  REQUIRE(comparison.ok());
  Outcomes outcomes;
  for (size_t i = 0; i < policies->size(); ++i) {
    const std::string& policy = (*policies)[i].name;
    const Outcome outcome = MeanOf(*comparison, i);
    if (policy == "tuned") outcomes.tuned = outcome;
    if (policy == "topofit") outcomes.topofit = outcome;
    if (policy == "topofit-no-wait") outcomes.topofit_no_wait = outcome;
    if (policy.starts_with("tuned")) outcomes.tuned_sweep[policy] = outcome;
  }
  outcomes.best_tuned = BestOf(outcomes.tuned_sweep);
  return cache[name] = outcomes;
}

bool Available(const std::string& name) {
  if (name.starts_with("openb")) return TracesPresent(TracesDir() / std::string(kOpenbFolder));
  if (name == "azure-llm") return TracesPresent(TracesDir() / std::string(kAzureLlmFolder));
  return true;
}

// topofit's `figure` no more than `margin` (a share of tuned's) above tuned's.
void CheckWithinMargin(const std::string& name, const char* what, double Outcome::*figure, double margin) {
  if (!Available(name)) return;
  const Outcomes& o = Replayed(name);
  INFO(name << ": " << what << ", tuned " << o.tuned.*figure << ", topofit " << o.topofit.*figure);
  CHECK(o.topofit.*figure <= o.tuned.*figure * (1 + margin));
}

void CheckIdle(const std::string& name) {
  CheckWithinMargin(name, "idle GPU-hours", &Outcome::idle_gpu_hours, kIdleMargin);
}

void CheckCost(const std::string& name) { CheckWithinMargin(name, "cost ($)", &Outcome::cost_dollars, kCostMargin); }

void CheckMultiGpuPending(const std::string& name) {
  if (!Available(name)) return;
  const Outcomes& o = Replayed(name);
  INFO(name << ": p95 pending of multi-GPU pods, tuned " << o.tuned.multi_gpu_p95_seconds << " s, topofit "
            << o.topofit.multi_gpu_p95_seconds << " s");
  CHECK(o.topofit.multi_gpu_p95_seconds <=
        std::max(o.tuned.multi_gpu_p95_seconds * (1 + kPendingMargin), o.tuned.multi_gpu_p95_seconds + kPendingFloorSeconds));
}

void CheckSlowdown(const std::string& name) {
  CheckWithinMargin(name, "slowdown GPU-hours", &Outcome::slowdown_gpu_hours, kSlowdownMargin);
}

// Issue 31: over the whole window, or over the fill for the paper's mode.
struct Bar {
  double Outcome::*idle;
  double Outcome::*cost;
};
constexpr Bar kWhole = {&Outcome::idle_gpu_hours, &Outcome::cost_dollars};
constexpr Bar kFill = {&Outcome::fill_idle_gpu_hours, &Outcome::fill_cost_dollars};

void CheckUndominated(const std::string& name, Bar bar) {
  if (!Available(name)) return;
  const Outcomes& o = Replayed(name);
  REQUIRE(o.tuned_sweep.size() >= 4);
  for (const auto& [policy, tuned] : o.tuned_sweep) {
    INFO(name << ": " << policy << " idle " << tuned.*bar.idle << " h, cost $" << tuned.*bar.cost << "; topofit "
              << o.topofit.*bar.idle << " h, $" << o.topofit.*bar.cost);
    CHECK_FALSE((tuned.*bar.idle <= (1 - kDominanceMargin) * o.topofit.*bar.idle &&
                 tuned.*bar.cost <= (1 - kDominanceMargin) * o.topofit.*bar.cost));
  }
}

void CheckRegret(const std::string& name, const char* what, double Outcome::*figure) {
  if (!Available(name)) return;
  const Outcomes& o = Replayed(name);
  INFO(name << ": " << what << ", best tuned " << o.best_tuned.*figure << ", topofit " << o.topofit.*figure);
  CHECK(o.topofit.*figure <= o.best_tuned.*figure * (1 + kRegretMargin));
}

TEST_CASE("outcome: synthetic, idle GPU-hours no worse than tuned + 5%", "[outcome]") { CheckIdle("synthetic"); }
// Failed when this test was added (cost $6,592 vs tuned $6,232, +5.8%; multi-GPU p95 644 s vs 287 s): a
// hold applied to every later node of a group, not only to the nodes of the scale-up chosen for the pods
// (see the Azure cases). Since holds bind only their own scale-up's nodes: $6,499 (+4.3%) and 302 s (+5%).
TEST_CASE("outcome: synthetic, cost no worse than tuned + 5%", "[outcome]") { CheckCost("synthetic"); }
TEST_CASE("outcome: synthetic, multi-GPU p95 pending no worse than tuned + 10%", "[outcome]") {
  CheckMultiGpuPending("synthetic");
}
TEST_CASE("outcome: synthetic, slowdown GPU-hours no worse than tuned + 10%", "[outcome]") { CheckSlowdown("synthetic"); }

TEST_CASE("outcome: openb, idle GPU-hours no worse than tuned + 5%", "[outcome]") { CheckIdle("openb"); }
TEST_CASE("outcome: openb, cost no worse than tuned + 5%", "[outcome]") { CheckCost("openb"); }
TEST_CASE("outcome: openb, multi-GPU p95 pending no worse than tuned + 10%", "[outcome]") {
  CheckMultiGpuPending("openb");
}
// Added in issue 13, session 14: with the group ranking counting a stretched pod's bill only (useful GPUs
// = GPUs / stretch), seeds 1-3 lost 9,079 slowdown GPU-hours against tuned's 7,810 (+16.3%): openb's cheap
// PCIe groups won every scale-up for the multi-GPU pods that prefer NVLink. Counting its delay too
// (UsefulShare, 1 / stretch²): 7,994 (+2.5%).
TEST_CASE("outcome: openb, slowdown GPU-hours no worse than tuned + 10%", "[outcome]") { CheckSlowdown("openb"); }

// Added with the drain guard (issue 13, session 13): before it, seeds 1-5 evicted 509 +- 542 multi-GPU pods
// under topofit against tuned's 4 +- 3 — CA drained pods that had asked for NVLink onto PCIe nodes the
// extender refused, and each asked for a new NVLink node. With it: 6 +- 2.
TEST_CASE("outcome: openb paper mode with declared run times, multi-GPU pods evicted by scale-down no more than tuned's x 2 (or + 10)",
          "[outcome]") {
  if (!Available("openb-paper-declared")) return;
  const Outcomes& o = Replayed("openb-paper-declared");
  INFO("multi-GPU pods evicted by scale-down, tuned " << o.tuned.evicted_multi_gpu_pods << ", topofit "
                                                      << o.topofit.evicted_multi_gpu_pods);
  CHECK(o.topofit.evicted_multi_gpu_pods <=
        std::max(2 * o.tuned.evicted_multi_gpu_pods, o.tuned.evicted_multi_gpu_pods + kEvictionFloor));
}

// Added with the completion time (session 15): a pod that says its run time may refuse a poorer set now
// and wait for capacity that gives the set it prefers (decision/capacity_wait.h). The waits must pay for
// themselves: over seeds 1-3, multi-GPU pods complete in 29.4 h on average against 34.0 h when topofit never
// waits (topofit-no-wait; 2-GPU pods 17.2 h against 37.3 h). The gain does not hang on one mechanism: it
// moved by at most 1.5 h under each single break tried (requests not confined to the shapes that give the
// set, or confined to the others; a group ranking blind to preferences; every preferring pod waiting
// whatever its run time; a 24 h wait bound). It fails the day waiting costs more than it buys.
TEST_CASE("outcome: openb paper mode with declared run times, multi-GPU pods complete no later than without waiting",
          "[outcome]") {
  if (!Available("openb-paper-declared")) return;
  const Outcomes& o = Replayed("openb-paper-declared");
  INFO("mean completion of multi-GPU pods, topofit " << o.topofit.multi_gpu_completion_hours << " h, without waiting "
                                                     << o.topofit_no_wait.multi_gpu_completion_hours << " h");
  CHECK(o.topofit.multi_gpu_completion_hours <= o.topofit_no_wait.multi_gpu_completion_hours);
}

// Azure LLM failed all three when this test was added (issue 12: "topofit +78% idle GPU-hours, +116% cost,
// 8-GPU p95 6.2 -> 32 min against the baseline"): means over seeds 1-3, tuned vs topofit, idle 100.3 h vs
// 149.7 h (+49%), cost $1,565 vs $2,392 (+53%), multi-GPU p95 406 s vs 1,514 s. Root cause: an intent's
// hold applied to every node of its group created after it, so the nodes later scale-ups grew for other
// pods were held too and stayed empty (23 new nodes ran no pod at all, seed 1) while those pods waited.
// Holds now bind only the intent's own scale-up's nodes: idle 83.1 h vs 82.7 h, passing.
TEST_CASE("outcome: azure-llm, idle GPU-hours no worse than tuned + 5%", "[outcome]") { CheckIdle("azure-llm"); }
// Cost still fails (seeds 1-3: +6.2%). Why (traced on seed 1): CA's option for a cheap PCIe group (g4dn)
// packs the NVLink-required replicas with the 1-GPU ones, so topofit's expander rightly refuses it (those
// nodes would strand) and the 1-GPU replicas ride on the p4d scale-ups ($4.10 per GPU-hour against g4dn's
// $0.98), which reach p4d's 32-node cap sooner and push later scale-ups to p5. The tuned operator's
// affinity gives CA separate options for them; the expander protocol cannot reshape CA's options. Tried and
// not kept (issue 13 notes): ProvisioningRequests for every pod requiring a topology, with the topology as
// the template's node affinity, brought cost to +0.8% but 8-GPU p95 to +16%, idle to +8%, and took the
// synthetic default's idle gain away; giving topofit's pods the tuned operator's affinity brought cost to
// -1.2% but the synthetic default's idle gain from -11% to -2%.
// Multi-GPU p95 failed (+11.9%) while the replay offered a new node to the pods its scale-up was for before
// older pods; in kube-scheduler's queue order, holds refusing only the pods they hold against: +3.1%
// (2-GPU -2.3%, 4-GPU +0.7%, 8-GPU +1.4%), passing.
TEST_CASE("outcome: azure-llm, cost no worse than tuned + 5%", "[outcome][!shouldfail]") { CheckCost("azure-llm"); }
TEST_CASE("outcome: azure-llm, multi-GPU p95 pending no worse than tuned + 10%", "[outcome]") {
  CheckMultiGpuPending("azure-llm");
}
TEST_CASE("outcome: azure-llm, slowdown GPU-hours no worse than tuned + 10%", "[outcome]") { CheckSlowdown("azure-llm"); }

// Issue 31's bar, per workload: undominated by every tuned configuration, idle and cost within +5% of the
// best tuned configuration's.
void CheckBar(const std::string& name, Bar bar) {
  CheckUndominated(name, bar);
  CheckRegret(name, "idle GPU-hours", bar.idle);
  CheckRegret(name, "cost ($)", bar.cost);
}

TEST_CASE("outcome: synthetic, never behind the best tuned configuration", "[outcome][issue31]") {
  CheckBar("synthetic", kWhole);
}
TEST_CASE("outcome: openb, never behind the best tuned configuration", "[outcome][issue31]") {
  CheckBar("openb", kWhole);
}
TEST_CASE("outcome: openb paper mode, never behind the best tuned configuration over the fill", "[outcome][issue31]") {
  CheckBar("openb-paper", kFill);
}
TEST_CASE("outcome: azure-llm, undominated, idle within +5% of the best tuned configuration", "[outcome][issue31]") {
  CheckUndominated("azure-llm", kWhole);
  CheckRegret("azure-llm", "idle GPU-hours", kWhole.idle);
}
// Fails where the cost case against tuned does, for the same reason (above): seeds 1-3, $1,671 against
// the best tuned configuration's $1,546 (tuned's, +8.1%) when this case was added.
TEST_CASE("outcome: azure-llm, cost within +5% of the best tuned configuration", "[outcome][issue31][!shouldfail]") {
  CheckRegret("azure-llm", "cost ($)", kWhole.cost);
}

// Issue 33's targets on the built-in gang workload (8 NVL72 racks, a day of training gangs, wide-EP groups
// and 1-GPU pods), against the tuned operator's gang scheduler with CA scaling pod by pod. When added
// (seeds 1-3): required gangs split 0; GPU-hours held by partial gangs 0 (tuned: 0; its gang scheduler
// places all or nothing too); gang start p95 and idle and cost as `topofit bench --workload gangs` shows
// in bench/RESULTS.md.
TEST_CASE("outcome: gangs, no required gang runs split, none holds GPUs partly placed", "[outcome][gangs]") {
  const Outcomes& o = Replayed("gangs");
  INFO("split gangs " << o.topofit.split_gangs << ", partial gang GPU-hours topofit " << o.topofit.partial_gang_gpu_hours
                      << ", tuned " << o.tuned.partial_gang_gpu_hours);
  CHECK(o.topofit.split_gangs == 0);
  CHECK(o.topofit.partial_gang_gpu_hours <= 0.1 * o.tuned.partial_gang_gpu_hours);
}
TEST_CASE("outcome: gangs, gang start p95 at most half of tuned's", "[outcome][gangs]") {
  const Outcomes& o = Replayed("gangs");
  INFO("gang start p95, tuned " << o.tuned.gang_p95_seconds << " s, topofit " << o.topofit.gang_p95_seconds << " s");
  CHECK(o.topofit.gang_p95_seconds <= 0.5 * o.tuned.gang_p95_seconds);
}
TEST_CASE("outcome: gangs, idle GPU-hours 30% below tuned's, cost no higher", "[outcome][gangs]") {
  const Outcomes& o = Replayed("gangs");
  INFO("idle tuned " << o.tuned.idle_gpu_hours << " h, topofit " << o.topofit.idle_gpu_hours << " h; cost tuned $"
                     << o.tuned.cost_dollars << ", topofit $" << o.topofit.cost_dollars);
  CHECK(o.topofit.idle_gpu_hours <= 0.7 * o.tuned.idle_gpu_hours);
  CHECK(o.topofit.cost_dollars <= o.tuned.cost_dollars);
}
TEST_CASE("outcome: gangs, never behind the best tuned configuration", "[outcome][gangs][issue31]") {
  CheckBar("gangs", kWhole);
}

}  // namespace
}  // namespace topofit::sim
