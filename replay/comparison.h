#pragma once

// A comparison of policies on one workload, seed after seed: every policy replayed, then all of them
// summarised over one measuring window (summary.h, WindowOf). What `topofit bench` prints and what
// the outcome regression test (tests/replay/outcome_regression_test.cc) checks.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "replay/policy.h"
#include "replay/simulator.h"
#include "replay/summary.h"
#include "replay/workload.h"

namespace topofit::sim {

// The workload a seed replays: a generator's output for that seed, or a trace (the same for every seed).
using WorkloadForSeed = std::function<absl::StatusOr<Workload>(uint64_t seed)>;

struct ComparisonOptions {
  std::vector<uint64_t> seeds = {1};
  ReplayOptions replay;  // its seed and progress are set per replay
  size_t jobs = 1;       // replays of one seed run at once
  // Keep the first seed's ReplayResults (the report's timeline and plots); later seeds keep summaries only,
  // so that memory stays that of one seed.
  bool keep_first_results = false;
  // The progress callback for a replay (null: none).
  std::function<std::function<void(double)>(uint64_t seed, size_t policy)> progress;
  // Where a replay's decisions are recorded (null or returning null: nowhere).
  std::function<history::DecisionRecorder*(uint64_t seed, size_t policy)> recorder;
};

struct SeedComparison {
  uint64_t seed = 0;
  MeasuringWindow window;
  std::vector<PolicySummary> summaries;  // in policy order
  std::vector<ReplayResult> results;     // in policy order, when kept
};

struct Comparison {
  Workload workload;  // the first seed's
  std::vector<SeedComparison> seeds;
};

// The first error of a workload or a replay, as it came.
absl::StatusOr<Comparison> Compare(const WorkloadForSeed& workload_for_seed, const std::vector<Policy>& policies,
                                   const ComparisonOptions& options);

}  // namespace topofit::sim
