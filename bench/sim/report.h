#pragma once

// The report `topofit bench` prints and writes (issue 5, "Report"): a table on the terminal, and with
// `--out DIR` the figures as CSV and JSON, the data behind the plots, and gnuplot scripts that draw them.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/sim/simulator.h"
#include "bench/sim/summary.h"
#include "bench/sim/workload.h"

namespace topofit::sim {

// Caps on the plot data per policy, so that a million-pod replay writes a few hundred KB, not a point
// per event.
inline constexpr size_t kMaxTimelinePoints = 2000;
inline constexpr size_t kMaxPendingCdfPoints = 500;

// A fixed-width table with one column per summary, in the order given, and, when a policy is named
// "baseline", each other policy's change against it on the key rows (idle GPU-hours, cost, pending p95).
std::string FormatTable(const Workload& workload, const std::vector<PolicySummary>& summaries);

// Whether `gnuplot` runs from PATH, so that WriteReport can draw the plots.
bool GnuplotOnPath();

// Writes into `dir` (created with its parents):
//   summary.csv       one row per policy, every PolicySummary field, pending per GPU count as columns;
//   summary.json      the workload's name and description and the per-policy summaries;
//   timeline.csv      policy,time_hours,provisioned_gpus,allocated_gpus,pending_pods,nodes, each policy's
//                     timeline cut to kMaxTimelinePoints by keeping the last point of each time bucket;
//   pending_cdf.csv   policy,wait_seconds,fraction: the share of all the policy's pods started within
//                     that wait, at most kMaxPendingCdfPoints per policy (pods never started never count,
//                     so a curve ends below 1 by their share);
//   gpus_over_time.gp, pending_cdf.gp   gnuplot scripts, run in `dir`, drawing the two SVGs below;
//   gpus_over_time.svg, pending_cdf.svg when gnuplot is on PATH and drew them.
// `results` and `summaries` are the same policies in the same order (InvalidArgument otherwise). Returns
// the paths written; a plot is listed only when gnuplot drew it. An error names the path that could not
// be created or written.
absl::StatusOr<std::vector<std::string>> WriteReport(const std::string& dir, const Workload& workload,
                                                      const std::vector<ReplayResult>& results,
                                                      const std::vector<PolicySummary>& summaries);

}  // namespace topofit::sim
