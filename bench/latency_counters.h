#pragma once

// Per-iteration latencies reported as Google Benchmark counters: p50, p99 and max in microseconds, for
// targets stated as percentiles (a mean hides the tail the targets are about).

#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

namespace topofit::bench {

inline void ReportLatencies(benchmark::State& state, std::vector<double> micros) {
  if (micros.empty()) return;
  std::sort(micros.begin(), micros.end());
  const auto at = [&](double p) { return micros[static_cast<size_t>(p / 100 * static_cast<double>(micros.size() - 1))]; };
  state.counters["p50_us"] = at(50);
  state.counters["p99_us"] = at(99);
  state.counters["max_us"] = micros.back();
}

}  // namespace topofit::bench
