// The outcome regression test (issue 12): on small, deterministic replays of the synthetic generator, the
// Alibaba openb trace and the Azure LLM trace, topofit must not do worse than the tuned stock baseline —
// kube-scheduler with MostAllocated over cpu, memory and nvidia.com/gpu, the node affinity an operator
// writes for pods that require a topology, CA's least-waste expander — beyond a stated margin on any of:
//   idle GPU-hours (margin 5%), cost (5%), p95 pending time of multi-GPU pods (10%, and at least 30 s);
// each the mean over seeds 1-3 of figures measured over the comparison's common window [0, T].
//
// A case that fails today is marked [!shouldfail] with its reason: Catch2 then reports it as an expected
// failure, and reports it as a FAILURE the day it passes, so the mark must be removed with the fix.
// All cases run in one process (one CTest test) so that each workload is replayed once. The traces are read
// in place from ../shared (TOPOFIT_SHARED_DIR): without them a trace case says it skipped (and fails under
// CI), and an expected failure that skipped is reported as an unexpected pass — this test needs the traces.

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "bench/sim/comparison.h"
#include "bench/sim/seeds.h"
#include "bench/sim/workloads/azure_llm.h"
#include "bench/sim/workloads/openb.h"
#include "bench/sim/workloads/synthetic.h"
#include "tests/sim/workloads/workload_testing.h"

namespace topofit::sim {
namespace {

constexpr double kIdleMargin = 0.05;
constexpr double kCostMargin = 0.05;
constexpr double kPendingMargin = 0.10;
constexpr double kPendingFloorSeconds = 30;  // below this a p95 difference is one CA loop or two
constexpr uint64_t kSeeds[] = {1, 2, 3};
constexpr int64_t kSyntheticPods = 2000;

// Means over the seeds of the figures the test holds topofit to.
struct Outcome {
  double idle_gpu_hours = 0;
  double cost_dollars = 0;
  double multi_gpu_p95_seconds = 0;
};

struct Outcomes {
  Outcome tuned, topofit;
};

Outcome MeanOf(const Comparison& comparison, size_t policy) {
  std::vector<double> idle, cost, p95;
  for (const SeedComparison& seed : comparison.seeds) {
    idle.push_back(seed.summaries[policy].idle_gpu_hours);
    cost.push_back(seed.summaries[policy].cost_dollars);
    p95.push_back(seed.summaries[policy].pending_multi_gpu.p95_seconds);
  }
  return {SpreadOf(idle).mean, SpreadOf(cost).mean, SpreadOf(p95).mean};
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
    if (name == "synthetic") {
      SyntheticOptions options;
      options.pod_count = kSyntheticPods;
      options.seed = seed;
      return GenerateSynthetic(options);
    }
    if (name == "openb") {
      OpenbOptions options;
      options.trace_dir = (TracesDir() / std::string(kOpenbFolder)).string();
      return LoadOpenb(options);
    }
    AzureLlmOptions options;
    options.trace_dir = (TracesDir() / std::string(kAzureLlmFolder)).string();
    return LoadAzureLlm(options);
  };
  ComparisonOptions options;
  options.seeds.assign(std::begin(kSeeds), std::end(kSeeds));
  options.jobs = 2;
  const std::vector<Policy> policies = {TunedPolicy("tuned", {StockExpander::kLeastWaste}),
                                        StandardPolicies({StockExpander::kLeastWaste}).back()};
  REQUIRE(policies.back().name == "topofit");
  absl::StatusOr<Comparison> comparison = Compare(workload, policies, options);
  REQUIRE(comparison.ok());
  return cache[name] = Outcomes{MeanOf(*comparison, 0), MeanOf(*comparison, 1)};
}

bool Available(const std::string& name) {
  if (name == "openb") return TracesPresent(TracesDir() / std::string(kOpenbFolder));
  if (name == "azure-llm") return TracesPresent(TracesDir() / std::string(kAzureLlmFolder));
  return true;
}

void CheckIdle(const std::string& name) {
  if (!Available(name)) return;
  const Outcomes& o = Replayed(name);
  INFO(name << ": idle GPU-hours, tuned " << o.tuned.idle_gpu_hours << ", topofit " << o.topofit.idle_gpu_hours);
  CHECK(o.topofit.idle_gpu_hours <= o.tuned.idle_gpu_hours * (1 + kIdleMargin));
}

void CheckCost(const std::string& name) {
  if (!Available(name)) return;
  const Outcomes& o = Replayed(name);
  INFO(name << ": cost, tuned $" << o.tuned.cost_dollars << ", topofit $" << o.topofit.cost_dollars);
  CHECK(o.topofit.cost_dollars <= o.tuned.cost_dollars * (1 + kCostMargin));
}

void CheckMultiGpuPending(const std::string& name) {
  if (!Available(name)) return;
  const Outcomes& o = Replayed(name);
  INFO(name << ": p95 pending of multi-GPU pods, tuned " << o.tuned.multi_gpu_p95_seconds << " s, topofit "
            << o.topofit.multi_gpu_p95_seconds << " s");
  CHECK(o.topofit.multi_gpu_p95_seconds <=
        std::max(o.tuned.multi_gpu_p95_seconds * (1 + kPendingMargin), o.tuned.multi_gpu_p95_seconds + kPendingFloorSeconds));
}

TEST_CASE("outcome: synthetic, idle GPU-hours no worse than tuned + 5%", "[outcome]") { CheckIdle("synthetic"); }
// Known failure at the commit that added this test (branch fairbench, parent def0108): means over seeds
// 1-3 of 2,000 synthetic pods, tuned $6,232, topofit $6,592 (+5.8%). topofit's expander ranks topology
// before price, so pods that prefer NVLink pull growth toward the dearer NVSwitch groups.
TEST_CASE("outcome: synthetic, cost no worse than tuned + 5%", "[outcome][!shouldfail]") { CheckCost("synthetic"); }
// Known failure, same run: tuned 287 s, topofit 644 s. The hold on new capacity and the ProvisioningRequest
// path make some multi-GPU pods wait for a node of their own where MostAllocated packs them at once.
TEST_CASE("outcome: synthetic, multi-GPU p95 pending no worse than tuned + 10%", "[outcome][!shouldfail]") {
  CheckMultiGpuPending("synthetic");
}

TEST_CASE("outcome: openb, idle GPU-hours no worse than tuned + 5%", "[outcome]") { CheckIdle("openb"); }
TEST_CASE("outcome: openb, cost no worse than tuned + 5%", "[outcome]") { CheckCost("openb"); }
TEST_CASE("outcome: openb, multi-GPU p95 pending no worse than tuned + 10%", "[outcome]") {
  CheckMultiGpuPending("openb");
}

// Known failures at the commit that added this test (issue 12: "topofit +78% idle GPU-hours, +116% cost,
// 8-GPU p95 6.2 -> 32 min against the baseline" on Azure LLM): means over seeds 1-3, tuned vs topofit,
// idle 100.3 h vs 149.7 h (+49%), cost $1,565 vs $2,392 (+53%), multi-GPU p95 406 s vs 1,514 s. The
// policy issue that follows issue 12 is to fix them; remove [!shouldfail] with the fix.
TEST_CASE("outcome: azure-llm, idle GPU-hours no worse than tuned + 5%", "[outcome][!shouldfail]") {
  CheckIdle("azure-llm");
}
TEST_CASE("outcome: azure-llm, cost no worse than tuned + 5%", "[outcome][!shouldfail]") { CheckCost("azure-llm"); }
TEST_CASE("outcome: azure-llm, multi-GPU p95 pending no worse than tuned + 10%", "[outcome][!shouldfail]") {
  CheckMultiGpuPending("azure-llm");
}

}  // namespace
}  // namespace topofit::sim
