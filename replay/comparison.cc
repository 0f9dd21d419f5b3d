#include "replay/comparison.h"

#include <algorithm>
#include <future>
#include <utility>

namespace topofit::sim {

absl::StatusOr<Comparison> Compare(const WorkloadForSeed& workload_for_seed, const std::vector<Policy>& policies,
                                   const ComparisonOptions& options) {
  Comparison comparison;
  const size_t jobs = std::max<size_t>(options.jobs, 1);
  for (size_t s = 0; s < options.seeds.size(); ++s) {
    const uint64_t seed = options.seeds[s];
    absl::StatusOr<Workload> workload = workload_for_seed(seed);
    if (!workload.ok()) return workload.status();
    std::vector<absl::StatusOr<ReplayResult>> replays(policies.size(), absl::UnknownError("not run"));
    // Replays share nothing but the read-only workload: run `jobs` of them at a time.
    for (size_t first = 0; first < policies.size(); first += jobs) {
      std::vector<std::future<void>> running;
      for (size_t i = first; i < std::min(first + jobs, policies.size()); ++i) {
        running.push_back(std::async(std::launch::async, [&, i] {
          ReplayOptions replay = options.replay;
          replay.seed = seed;
          replay.progress = options.progress ? options.progress(seed, i) : nullptr;
          replay.recorder = options.recorder ? options.recorder(seed, i) : nullptr;
          replays[i] = Replay(*workload, policies[i], replay);
        }));
      }
      for (std::future<void>& f : running) f.get();
    }
    SeedComparison run;
    run.seed = seed;
    for (absl::StatusOr<ReplayResult>& replay : replays) {
      if (!replay.ok()) return replay.status();
      run.results.push_back(*std::move(replay));
    }
    run.window = WindowOf(*workload);
    for (const ReplayResult& result : run.results) {
      run.summaries.push_back(Summarise(result, run.window));
      run.summaries.back().seed = seed;
    }
    if (!(options.keep_first_results && s == 0)) run.results.clear();
    if (s == 0) comparison.workload = *std::move(workload);
    comparison.seeds.push_back(std::move(run));
  }
  return comparison;
}

}  // namespace topofit::sim
