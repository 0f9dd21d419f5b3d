#pragma once

// The report `topofit bench` prints and writes (issue 5, "Report"): a table on the terminal, and with
// `--out DIR` the figures as CSV and JSON, the data behind the plots, and gnuplot scripts that draw them.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "replay/comparison.h"
#include "replay/simulator.h"
#include "replay/summary.h"
#include "replay/workload.h"

namespace topofit::sim {

// Caps on the plot data per policy, so that a million-pod replay writes a few hundred KB, not a point
// per event.
inline constexpr size_t kMaxTimelinePoints = 2000;
inline constexpr size_t kMaxPendingCdfPoints = 500;

// A fixed-width table with one column per policy, in the order given: `runs` holds one vector of
// summaries per seed, the policies in the same order in each. With several seeds a cell is the mean ± the
// sample standard deviation over them. Above the rows, the workload, the seeds and the measuring window;
// below them, each policy's change against "tuned" and against "stock" when they are there (idle
// GPU-hours, cost, pending p95 of all and of multi-GPU pods), computed seed by seed; with `legend`, a line
// per row saying what it counts.
std::string FormatTable(const Workload& workload, const std::vector<std::vector<PolicySummary>>& runs,
                        bool legend = true);

// Whether `gnuplot` runs from PATH, so that WriteReport can draw the plots.
bool GnuplotOnPath();

// Writes into `dir` (created with its parents):
//   summary.csv       one row per policy and seed: every PolicySummary field, pending times (all pods,
//                     multi-GPU pods, per GPU count) as columns;
//   summary.json      the workload's name and description, the seeds, and per policy its mean and standard
//                     deviation of every number over the seeds and each seed's summary;
//   timeline.csv      policy,time_hours,provisioned_gpus,allocated_gpus,idle_gpus,idle_gpu_hours_so_far,
//                     pending_pods,nodes for the first seed, over its measuring window (the last state held
//                     to T), cut to kMaxTimelinePoints by keeping the last point of each time bucket;
//   pending_cdf.csv   policy,wait_seconds,fraction for the first seed: the share of all the policy's pods
//                     started within that wait, at most kMaxPendingCdfPoints per policy (pods never started
//                     never count, so a curve ends below 1 by their share);
//   gpus_over_time.gp, pending_cdf.gp   gnuplot scripts, run in `dir`, drawing the two SVGs below:
//                     idle GPU-hours accrued and idle GPUs over time; the pending CDF on a log axis with
//                     zero waits drawn at 0.1 s (both say so);
//   gpus_over_time.svg, pending_cdf.svg when gnuplot is on PATH and drew them.
//   headroom_frontier.csv, .gp, .svg   for a workload with inference pods: each policy's idle GPU-hours and
//                     its inference pods' p95 pending, means over the seeds (the headroom frontier, issue 34).
// The comparison must hold its first seed's results (ComparisonOptions::keep_first_results;
// InvalidArgument otherwise). Returns the paths written; a plot is listed only when gnuplot drew it. An
// error names the path that could not be created or written.
absl::StatusOr<std::vector<std::string>> WriteReport(const std::string& dir, const Comparison& comparison);

}  // namespace topofit::sim
