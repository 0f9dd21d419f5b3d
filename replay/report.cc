#include "replay/report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <fstream>
#include <set>
#include <system_error>
#include <utility>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "replay/seeds.h"
#include "nlohmann/json.hpp"

namespace topofit::sim {
namespace {

namespace fs = std::filesystem;
// Ordered, so that the JSON keys and the CSV columns keep the order of the field lists below.
using Json = nlohmann::ordered_json;

// ---- The table's units ----

// `value` with `decimals` places and commas between thousands: (1234567.8, 0) -> "1,234,568".
std::string Grouped(double value, int decimals) {
  const std::string plain = absl::StrFormat("%.*f", decimals, value);
  const size_t digits_begin = plain[0] == '-' ? 1 : 0;
  const size_t digits_end = std::min(plain.find('.'), plain.size());
  std::string grouped = plain.substr(0, digits_begin);
  for (size_t i = digits_begin; i < digits_end; ++i) {
    if (i > digits_begin && (digits_end - i) % 3 == 0) grouped += ',';
    grouped += plain[i];
  }
  return grouped + plain.substr(digits_end);
}

// Fewer places as the number grows: three significant digits or more, never a wall of decimals.
std::string FormatHours(double hours) {
  const double magnitude = std::fabs(hours);
  return absl::StrCat(Grouped(hours, magnitude < 10 ? 2 : magnitude < 1000 ? 1 : 0), " h");
}

std::string FormatDollars(double dollars) {
  return absl::StrCat("$", Grouped(dollars, std::fabs(dollars) < 1000 ? 2 : 0));
}

std::string FormatCount(double count) { return Grouped(count, 0); }

std::string FormatShare(double share) { return absl::StrFormat("%.1f%%", 100 * share); }

std::string FormatWait(double seconds) {
  if (seconds < 60) return absl::StrFormat("%.1f s", seconds);
  if (seconds < 3600) return absl::StrFormat("%.1f min", seconds / 60);
  return absl::StrFormat("%.1f h", seconds / 3600);
}

// A table row: its label, then a cell per policy. A gap between sections has neither.
struct Row {
  std::string label;
  std::vector<std::string> cells;
};

// Characters on the terminal: UTF-8 continuation bytes (10xxxxxx) take no column ("±" is two bytes).
size_t DisplayWidth(absl::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string Padded(absl::string_view text, size_t width, bool right) {
  const std::string pad(width - std::min(width, DisplayWidth(text)), ' ');
  return right ? absl::StrCat(pad, text) : absl::StrCat(text, pad);
}

// Labels left-aligned, cells right-aligned under their column's widest entry.
std::string Render(const std::vector<Row>& rows) {
  size_t label_width = 0;
  std::vector<size_t> cell_widths;
  for (const Row& row : rows) {
    if (!row.cells.empty()) label_width = std::max(label_width, DisplayWidth(row.label));
    if (cell_widths.size() < row.cells.size()) cell_widths.resize(row.cells.size());
    for (size_t i = 0; i < row.cells.size(); ++i) cell_widths[i] = std::max(cell_widths[i], DisplayWidth(row.cells[i]));
  }
  std::string out;
  for (const Row& row : rows) {
    if (row.cells.empty()) {
      absl::StrAppend(&out, row.label, "\n");
      continue;
    }
    absl::StrAppend(&out, Padded(row.label, label_width, false));
    for (size_t i = 0; i < row.cells.size(); ++i) absl::StrAppend(&out, "  ", Padded(row.cells[i], cell_widths[i], true));
    absl::StrAppend(&out, "\n");
  }
  return out;
}

// ---- The files ----

// A field of a summary struct, named as in the JSON and the CSV header.
template <typename Struct>
struct Field {
  absl::string_view name;
  std::variant<int Struct::*, double Struct::*> member;
};

template <typename Struct>
Json ValueOf(const Struct& object, const Field<Struct>& field) {
  return std::visit([&](auto member) { return Json(object.*member); }, field.member);
}

template <typename Struct>
double NumberOf(const Struct& object, const Field<Struct>& field) {
  return std::visit([&](auto member) { return static_cast<double>(object.*member); }, field.member);
}

// Every number in PolicySummary outside its pending times, in declaration order.
constexpr Field<PolicySummary> kSummaryFields[] = {
    {"provisioned_gpu_hours", &PolicySummary::provisioned_gpu_hours},
    {"allocated_gpu_hours", &PolicySummary::allocated_gpu_hours},
    {"idle_gpu_hours", &PolicySummary::idle_gpu_hours},
    {"idle_share", &PolicySummary::idle_share},
    {"node_hours", &PolicySummary::node_hours},
    {"idle_booting_gpu_hours", &PolicySummary::idle_booting_gpu_hours},
    {"idle_held_for_intent_gpu_hours", &PolicySummary::idle_held_for_intent_gpu_hours},
    {"idle_awaiting_scale_down_gpu_hours", &PolicySummary::idle_awaiting_scale_down_gpu_hours},
    {"idle_fragmented_gpu_hours", &PolicySummary::idle_fragmented_gpu_hours},
    {"idle_no_demand_gpu_hours", &PolicySummary::idle_no_demand_gpu_hours},
    {"busy_idle_gpu_hours", &PolicySummary::busy_idle_gpu_hours},
    {"busy_idle_share", &PolicySummary::busy_idle_share},
    {"fill_idle_gpu_hours", &PolicySummary::fill_idle_gpu_hours},
    {"fill_idle_share", &PolicySummary::fill_idle_share},
    {"fill_cost_dollars", &PolicySummary::fill_cost_dollars},
    {"scale_ups", &PolicySummary::scale_ups},
    {"stranded_scale_ups", &PolicySummary::stranded_scale_ups},
    {"overtaken_scale_ups", &PolicySummary::overtaken_scale_ups},
    {"new_nodes", &PolicySummary::new_nodes},
    {"stranded_nodes", &PolicySummary::stranded_nodes},
    {"empty_stranded_nodes", &PolicySummary::empty_stranded_nodes},
    {"stranded_node_hours", &PolicySummary::stranded_node_hours},
    {"nodes_created", &PolicySummary::nodes_created},
    {"peak_nodes", &PolicySummary::peak_nodes},
    {"provisioning_requests", &PolicySummary::provisioning_requests},
    {"vetoes", &PolicySummary::vetoes},
    {"gpu_sets_not_as_chosen", &PolicySummary::gpu_sets_not_as_chosen},
    {"failed_nodes", &PolicySummary::failed_nodes},
    {"evicted_pods", &PolicySummary::evicted_pods},
    {"evicted_multi_gpu_pods", &PolicySummary::evicted_multi_gpu_pods},
    {"pods", &PolicySummary::pods},
    {"pods_never_started", &PolicySummary::pods_never_started},
    {"multi_gpu_pods_started", &PolicySummary::multi_gpu_pods_started},
    {"best_topology_share", &PolicySummary::best_topology_share},
    {"mean_stretch", &PolicySummary::mean_stretch},
    {"slowdown_gpu_hours", &PolicySummary::slowdown_gpu_hours},
    {"cost_dollars", &PolicySummary::cost_dollars},
    {"gangs", &PolicySummary::gangs},
    {"gangs_started", &PolicySummary::gangs_started},
    {"split_gangs", &PolicySummary::split_gangs},
    {"partial_gang_gpu_hours", &PolicySummary::partial_gang_gpu_hours},
    {"lower_bound_cost_dollars", &PolicySummary::lower_bound_cost_dollars},
    {"requested_gpu_hours", &PolicySummary::requested_gpu_hours},
    {"hours", &PolicySummary::hours},
    {"window_hours", &PolicySummary::window_hours},
    {"busy_from_hours", &PolicySummary::busy_from_hours},
    {"fill_from_hours", &PolicySummary::fill_from_hours},
    {"fill_end_hours", &PolicySummary::fill_end_hours},
};

constexpr Field<PendingPercentiles> kPendingFields[] = {
    {"pods", &PendingPercentiles::pods},
    {"p50_seconds", &PendingPercentiles::p50_seconds},
    {"p95_seconds", &PendingPercentiles::p95_seconds},
    {"p99_seconds", &PendingPercentiles::p99_seconds},
};

Json PendingJson(const PendingPercentiles& pending) {
  Json json = Json::object();
  for (const Field<PendingPercentiles>& field : kPendingFields) json[std::string(field.name)] = ValueOf(pending, field);
  return json;
}

Json PolicyJson(const PolicySummary& summary) {
  Json json = Json::object();
  json["policy"] = summary.policy;
  json["seed"] = summary.seed;
  for (const Field<PolicySummary>& field : kSummaryFields) json[std::string(field.name)] = ValueOf(summary, field);
  json["pending"] = PendingJson(summary.pending);
  json["pending_multi_gpu"] = PendingJson(summary.pending_multi_gpu);
  json["pending_inference"] = PendingJson(summary.pending_bursty);
  json["gang_pending"] = PendingJson(summary.gang_pending);
  Json by_gpus = Json::object();
  for (const auto& [gpus, pending] : summary.pending_by_gpus) by_gpus[std::to_string(gpus)] = PendingJson(pending);
  json["pending_by_gpus"] = std::move(by_gpus);
  Json completion = Json::object();
  for (const auto& [gpus, times] : summary.completion_by_gpus) {
    completion[std::to_string(gpus)] = Json{{"pods", times.pods}, {"mean_hours", times.mean_hours}};
  }
  json["completion_by_gpus"] = std::move(completion);
  Json by_group = Json::object();
  for (const auto& [group, spend] : summary.by_group) {
    by_group[group] = Json{{"node_hours", spend.node_hours}, {"cost_dollars", spend.cost_dollars}};
  }
  json["by_group"] = std::move(by_group);
  return json;
}

// The summaries of policy `index` across the runs (one per seed).
std::vector<const PolicySummary*> AcrossSeeds(const std::vector<std::vector<PolicySummary>>& runs, size_t index) {
  std::vector<const PolicySummary*> summaries;
  for (const std::vector<PolicySummary>& run : runs) summaries.push_back(&run[index]);
  return summaries;
}

std::string SummaryJson(const Workload& workload, const std::vector<std::vector<PolicySummary>>& runs) {
  Json json = Json::object();
  json["workload"] = {{"name", workload.name},
                      {"description", workload.description},
                      {"node_groups", workload.groups.size()},
                      {"pods", workload.pods.size()}};
  Json seeds = Json::array();
  for (const std::vector<PolicySummary>& run : runs) seeds.push_back(run.front().seed);
  json["seeds"] = std::move(seeds);
  Json policies = Json::array();
  for (size_t i = 0; i < runs.front().size(); ++i) {
    const std::vector<const PolicySummary*> summaries = AcrossSeeds(runs, i);
    Json policy = Json::object();
    policy["policy"] = summaries.front()->policy;
    Json per_seed = Json::array();
    for (const PolicySummary* summary : summaries) per_seed.push_back(PolicyJson(*summary));
    Json mean = Json::object(), sd = Json::object();
    for (const Field<PolicySummary>& field : kSummaryFields) {
      std::vector<double> values;
      for (const PolicySummary* summary : summaries) values.push_back(NumberOf(*summary, field));
      const Spread spread = SpreadOf(values);
      mean[std::string(field.name)] = spread.mean;
      sd[std::string(field.name)] = spread.sd;
    }
    policy["mean"] = std::move(mean);
    policy["sd"] = std::move(sd);
    policy["runs"] = std::move(per_seed);
    policies.push_back(std::move(policy));
  }
  json["policies"] = std::move(policies);
  return json.dump(2) + "\n";
}

// A CSV field, quoted when it holds a separator, a quote or a line break (RFC 4180).
std::string CsvField(absl::string_view text) {
  if (text.find_first_of(",\"\r\n") == absl::string_view::npos) return std::string(text);
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
}

// The GPU counts, `min_gpus` or more, that any summary's `by_gpus` map has an entry for
// (PolicySummary::pending_by_gpus, completion_by_gpus), ascending.
template <typename Times>
std::set<int> GpuCounts(const std::vector<std::vector<PolicySummary>>& runs,
                        std::map<int, Times> PolicySummary::*by_gpus, int min_gpus = 0) {
  std::set<int> counts;
  for (const std::vector<PolicySummary>& run : runs) {
    for (const PolicySummary& summary : run) {
      for (const auto& [gpus, times] : summary.*by_gpus) {
        if (gpus >= min_gpus) counts.insert(gpus);
      }
    }
  }
  return counts;
}

std::string SummaryCsv(const std::vector<std::vector<PolicySummary>>& runs) {
  const std::set<int> gpu_counts = GpuCounts(runs, &PolicySummary::pending_by_gpus);
  std::vector<std::string> header = {"policy", "seed"};
  for (const Field<PolicySummary>& field : kSummaryFields) header.emplace_back(field.name);
  for (absl::string_view group : {"pending_", "pending_multi_gpu_", "gang_pending_"}) {
    for (const Field<PendingPercentiles>& field : kPendingFields) header.push_back(absl::StrCat(group, field.name));
  }
  for (int gpus : gpu_counts) {
    for (const Field<PendingPercentiles>& field : kPendingFields) {
      header.push_back(absl::StrCat("pending_", gpus, "gpu_", field.name));
    }
  }
  const std::set<int> completion_counts = GpuCounts(runs, &PolicySummary::completion_by_gpus);
  for (int gpus : completion_counts) {
    header.push_back(absl::StrCat("completion_", gpus, "gpu_pods"));
    header.push_back(absl::StrCat("completion_", gpus, "gpu_mean_hours"));
  }
  std::string csv = absl::StrCat(absl::StrJoin(header, ","), "\n");
  for (size_t i = 0; i < runs.front().size(); ++i) {
    for (const PolicySummary* summary : AcrossSeeds(runs, i)) {
      std::vector<std::string> cells = {CsvField(summary->policy), absl::StrCat(summary->seed)};
      for (const Field<PolicySummary>& field : kSummaryFields) cells.push_back(ValueOf(*summary, field).dump());
      for (const PendingPercentiles* pending : {&summary->pending, &summary->pending_multi_gpu, &summary->gang_pending}) {
        for (const Field<PendingPercentiles>& field : kPendingFields) cells.push_back(ValueOf(*pending, field).dump());
      }
      for (int gpus : gpu_counts) {
        const auto pending = summary->pending_by_gpus.find(gpus);
        for (const Field<PendingPercentiles>& field : kPendingFields) {
          cells.push_back(pending == summary->pending_by_gpus.end() ? "" : ValueOf(pending->second, field).dump());
        }
      }
      for (int gpus : completion_counts) {
        const auto completion = summary->completion_by_gpus.find(gpus);
        const bool known = completion != summary->completion_by_gpus.end();
        cells.push_back(known ? Json(completion->second.pods).dump() : "");
        cells.push_back(known ? Json(completion->second.mean_hours).dump() : "");
      }
      absl::StrAppend(&csv, absl::StrJoin(cells, ","), "\n");
    }
  }
  return csv;
}

// Of `points`, whose bucket numbers never decrease along the vector, the last of each bucket.
template <typename Point, typename BucketOf>
std::vector<Point> LastOfEachBucket(const std::vector<Point>& points, BucketOf bucket_of) {
  std::vector<Point> kept;
  for (size_t i = 0; i < points.size(); ++i) {
    if (i + 1 < points.size() && bucket_of(points[i + 1]) == bucket_of(points[i])) continue;
    kept.push_back(points[i]);
  }
  return kept;
}

double Hours(SimTime time) { return static_cast<double>(time) / static_cast<double>(kHour); }

// A timeline point with the idle GPU-hours accrued from 0 up to it.
struct IdlePoint {
  TimelinePoint point;
  double idle_gpu_hours = 0;
};

// The timeline up to the window's end (the last state held until then), each point with its accrued idle
// GPU-hours, cut to at most kMaxTimelinePoints from equal slices of the window.
std::vector<IdlePoint> WindowTimeline(const std::vector<TimelinePoint>& timeline, SimTime end) {
  std::vector<IdlePoint> points;
  double idle = 0;
  for (size_t i = 0; i < timeline.size() && timeline[i].at <= end; ++i) {
    if (i > 0) {
      const TimelinePoint& before = timeline[i - 1];
      idle += Hours(timeline[i].at - before.at) * (before.provisioned_gpus - before.allocated_gpus);
    }
    points.push_back({timeline[i], idle});
  }
  if (!points.empty() && points.back().point.at < end) {
    const TimelinePoint& last = points.back().point;
    IdlePoint held{last, idle + Hours(end - last.at) * (last.provisioned_gpus - last.allocated_gpus)};
    held.point.at = end;
    points.push_back(held);
  }
  if (points.size() <= kMaxTimelinePoints) return points;
  const SimTime span = end + 1;
  return LastOfEachBucket(points, [&](const IdlePoint& p) {
    return p.point.at * static_cast<SimTime>(kMaxTimelinePoints) / span;
  });
}

std::string TimelineCsv(const std::vector<ReplayResult>& results, SimTime end) {
  std::string csv = "policy,time_hours,provisioned_gpus,allocated_gpus,idle_gpus,idle_gpu_hours_so_far,pending_pods,nodes\n";
  for (const ReplayResult& result : results) {
    const std::string policy = CsvField(result.policy);
    for (const IdlePoint& p : WindowTimeline(result.timeline, end)) {
      const TimelinePoint& point = p.point;
      absl::StrAppend(&csv, absl::StrFormat("%s,%.4f,%d,%d,%d,%.3f,%d,%d\n", policy, Hours(point.at),
                                            point.provisioned_gpus, point.allocated_gpus,
                                            point.provisioned_gpus - point.allocated_gpus, p.idle_gpu_hours,
                                            point.pending_pods, point.nodes));
    }
  }
  return csv;
}

// A step of the pending-time CDF: `started` pods had started within `wait`.
struct CdfStep {
  SimTime wait = 0;
  size_t started = 0;
};

// The pods that started the moment they were created.
size_t StartedAtOnce(const ReplayResult& result) {
  return static_cast<size_t>(std::count_if(result.pods.begin(), result.pods.end(), [](const PodOutcome& pod) {
    return pod.first_start >= 0 && pod.first_start == pod.arrival;
  }));
}

// The CDF at a wait of 0 (the pods that started the moment they were created, perhaps none), then one
// step per distinct wait, at most kMaxPendingCdfPoints of them from equal slices of the pods. The first
// step is kept apart so that the curve starts from it: downsampling would fold it into a later wait.
std::vector<CdfStep> PendingCdf(const ReplayResult& result) {
  std::vector<SimTime> waits;
  for (const PodOutcome& pod : result.pods) {
    if (pod.first_start >= 0) waits.push_back(pod.first_start - pod.arrival);
  }
  std::sort(waits.begin(), waits.end());
  std::vector<CdfStep> steps;
  steps.reserve(waits.size());
  for (size_t i = 0; i < waits.size(); ++i) steps.push_back(CdfStep{waits[i], i + 1});
  const std::vector<CdfStep> distinct = LastOfEachBucket(steps, [](const CdfStep& step) { return step.wait; });
  std::vector<CdfStep> cdf = {CdfStep{0, StartedAtOnce(result)}};
  for (const CdfStep& step : LastOfEachBucket(distinct, [&](const CdfStep& step) {
         return (step.started - 1) * (kMaxPendingCdfPoints - 1) / waits.size();  // and the zero step
       })) {
    if (step.wait > 0) cdf.push_back(step);
  }
  return cdf;
}

std::string PendingCdfCsv(const std::vector<ReplayResult>& results) {
  std::string csv = "policy,wait_seconds,fraction\n";
  for (const ReplayResult& result : results) {
    const std::string policy = CsvField(result.policy);
    for (const CdfStep& step : PendingCdf(result)) {
      absl::StrAppend(&csv, absl::StrFormat("%s,%.3f,%.6f\n", policy, static_cast<double>(step.wait) / kSecond,
                                            static_cast<double>(step.started) / result.pods.size()));
    }
  }
  return csv;
}

// ---- The plots ----

struct Plot {
  absl::string_view script;
  absl::string_view svg;
};
constexpr Plot kGpusOverTime = {"gpus_over_time.gp", "gpus_over_time.svg"};
constexpr Plot kPendingCdf = {"pending_cdf.gp", "pending_cdf.svg"};
constexpr Plot kHeadroomFrontier = {"headroom_frontier.gp", "headroom_frontier.svg"};

// Where the pending CDF draws the pods that started the moment they were created: a log axis has no 0.
constexpr double kZeroWaitDrawnAt = 0.1;

// A double-quoted gnuplot string.
std::string GnuplotString(absl::string_view text) {
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\\", "\\\\"}, {"\"", "\\\""}}), "\"");
}

// The settings both plots share. Text is not "enhanced": policy and trace names hold underscores.
std::string ScriptHead(const Plot& plot, int height) {
  return absl::StrCat("# Written by `topofit bench --out`; run `gnuplot ", plot.script, "` in this directory.\n",
                      "set terminal svg size 1000,", height,
                      " dynamic noenhanced font \"sans,12\" background rgb \"white\"\n", "set output ",
                      GnuplotString(plot.svg), "\n", "set datafile separator \",\"\n", "set datafile columnheaders\n",
                      "set key outside right top\n", "set grid\n");
}

// One line per policy for `column` of timeline.csv; each policy's rows are contiguous, so filtering the
// others out (1/0 is gnuplot's undefined value) leaves its line unbroken.
std::string TimelinePlot(const std::vector<ReplayResult>& results, int column, absl::string_view style) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string policy = GnuplotString(results[i].policy);
    lines.push_back(absl::StrFormat("  \"timeline.csv\" using 2:(strcol(1) eq %s ? $%d : 1/0) with %s lc %d lw 2 title %s",
                                    policy, column, style, i + 1, policy));
  }
  return absl::StrCat("plot \\\n", absl::StrJoin(lines, ", \\\n"), "\n");
}

// The part of the window [0, end] in which some policy has pods running or pending, with a margin of 2% of
// its length each side; the whole window when there is none. A replay's window runs on long after its last
// pod ends (to the last scale-down of the slowest policy), flat lines that squeeze the busy hours.
std::pair<double, double> BusyHours(const std::vector<ReplayResult>& results, SimTime end) {
  SimTime first = end, last = 0;
  for (const ReplayResult& result : results) {
    for (size_t i = 0; i < result.timeline.size() && result.timeline[i].at <= end; ++i) {
      const TimelinePoint& point = result.timeline[i];
      if (point.allocated_gpus == 0 && point.pending_pods == 0) continue;
      first = std::min(first, point.at);
      // Busy until the next point (or the window's end, for the last).
      last = std::max(last, i + 1 < result.timeline.size() ? std::min(result.timeline[i + 1].at, end) : end);
    }
  }
  if (first >= last) return {0, Hours(end)};
  const double margin = Hours(last - first) / 50;
  return {std::max(0.0, Hours(first) - margin), std::min(Hours(end), Hours(last) + margin)};
}

// Two panels over the busy part of the measuring window: the idle GPU-hours each policy has accrued so
// far (where the totals' difference shows), and its idle GPUs (provisioned - allocated) at each moment.
std::string GpusOverTimeScript(const Workload& workload, const std::vector<ReplayResult>& results, SimTime end) {
  std::string script = ScriptHead(kGpusOverTime, 900);
  const auto [from, to] = BusyHours(results, end);
  absl::StrAppend(&script, "set multiplot layout 2,1 title ",
                  GnuplotString(absl::StrFormat("Idle GPUs while pods run or wait (%.1f-%.1f h of the %.1f h "
                                                "measuring window; the tables' totals include the rest): %s",
                                                from, to, Hours(end), workload.name)),
                  "\n", absl::StrFormat("set xrange [%.4f:%.4f]\n", from, to),
                  "set xlabel \"time (hours)\"\nset yrange [0:*]\n",
                  "set title \"idle GPU-hours accrued since 0 (provisioned - allocated, integrated)\"\n",
                  "set ylabel \"GPU-hours\"\n", TimelinePlot(results, 6, "lines"),
                  "set title \"idle GPUs at each moment (provisioned - allocated)\"\n", "set ylabel \"GPUs\"\n",
                  TimelinePlot(results, 5, "steps"), "unset multiplot\n");
  return script;
}

std::string PendingCdfScript(const Workload& workload, const std::vector<ReplayResult>& results) {
  std::string script = ScriptHead(kPendingCdf, 600);
  absl::StrAppend(&script, "set title ", GnuplotString(absl::StrCat("Pending time CDF: ", workload.name)), "\n",
                  absl::StrFormat("set logscale x\nset xlabel \"time from creation to start (seconds, log scale; "
                                  "pods that started at once are drawn at %.1f s)\"\n",
                                  kZeroWaitDrawnAt),
                  "set ylabel \"share of pods started (never-started pods keep a curve below 1)\"\n",
                  "set yrange [0:1]\nplot \\\n");
  std::vector<std::string> lines;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string policy = GnuplotString(results[i].policy);
    // The legend says the share that started at once: the curve's foot, easy to miss on a log axis.
    const double at_once = results[i].pods.empty() ? 0.0
                                                   : static_cast<double>(StartedAtOnce(results[i])) /
                                                         static_cast<double>(results[i].pods.size());
    lines.push_back(absl::StrFormat(
        "  \"pending_cdf.csv\" using (strcol(1) eq %s ? ($2 > 0 ? $2 : %.1f) : 1/0):3 with steps lc %d lw 2 title %s",
        policy, kZeroWaitDrawnAt, i + 1,
        GnuplotString(absl::StrFormat("%s (%.1f%% at once)", results[i].policy, 100 * at_once))));
  }
  absl::StrAppend(&script, absl::StrJoin(lines, ", \\\n"), "\n");
  return script;
}

// Whether the workload has inference pods, whose wait headroom is kept for.
bool HasBurstyPods(const std::vector<std::vector<PolicySummary>>& runs) {
  return !runs.empty() && !runs.front().empty() && runs.front().front().pending_bursty.pods > 0;
}

// Each policy's idle GPU-hours and its inference pods' p95 pending, means over the seeds: one point of the
// headroom frontier (issue 34) per policy.
std::string HeadroomFrontierCsv(const std::vector<std::vector<PolicySummary>>& runs) {
  std::string csv = "policy,idle_gpu_hours,pending_p95_inference_seconds,seeds\n";
  for (size_t p = 0; p < runs.front().size(); ++p) {
    double idle = 0, p95 = 0;
    for (const std::vector<PolicySummary>& run : runs) {
      idle += run[p].idle_gpu_hours;
      p95 += run[p].pending_bursty.p95_seconds;
    }
    const double seeds = static_cast<double>(runs.size());
    absl::StrAppend(&csv, runs.front()[p].policy, ",", absl::StrFormat("%.3f,%.3f", idle / seeds, p95 / seeds), ",",
                    runs.size(), "\n");
  }
  return csv;
}

std::string HeadroomFrontierScript(const Workload& workload) {
  std::string script = ScriptHead(kHeadroomFrontier, 700);
  absl::StrAppend(&script, "set title ",
                  GnuplotString(absl::StrCat("Warm capacity against idle GPUs: ", workload.name)), "\n",
                  "set xlabel \"idle GPU-hours (mean over seeds; lower left is better)\"\n",
                  "set ylabel \"p95 pending of inference pods (seconds)\"\n",
                  "set yrange [0:*]\nset offsets graph 0.05, graph 0.15, graph 0.05, 0\nunset key\n",
                  "plot \"headroom_frontier.csv\" using 2:3 with points pt 7 ps 1.2 lc 1, \\\n",
                  "  \"headroom_frontier.csv\" using 2:3:1 with labels offset 0,1 font \"sans,9\"\n");
  return script;
}

// Single-quoted for sh: each ' closes the quote, is escaped, and reopens it.
std::string ShellQuoted(absl::string_view text) {
  return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "'\\''"}}), "'");
}

// Runs the plot's script with gnuplot in `dir`: true when gnuplot succeeded and left a non-empty SVG.
bool Draw(const fs::path& dir, const Plot& plot) {
  const fs::path svg = dir / std::string(plot.svg);
  std::error_code error;
  fs::remove(svg, error);  // a drawing left by an earlier report must not pass for this one
  const std::string command = absl::StrCat("cd ", ShellQuoted(dir.string()), " && gnuplot ", plot.script);
  if (std::system(command.c_str()) != 0) return false;
  const auto size = fs::file_size(svg, error);
  return !error && size > 0;
}

absl::Status WriteFile(const fs::path& path, const std::string& content) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  // A stream can fail without a system error (errno 0 would read as OK).
  if (out.fail()) return absl::ErrnoToStatus(errno != 0 ? errno : EIO, absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

// A figure of a summary for a table row; nullopt where the summary has none.
using Figure = std::function<std::optional<double>(const PolicySummary&)>;

// One value, or the mean ± the sample standard deviation over seeds; `missing` when no seed has one.
std::string Cell(const std::vector<double>& values, std::string (*format)(double), absl::string_view missing) {
  if (values.empty()) return std::string(missing);
  if (values.size() == 1) return format(values.front());
  const Spread spread = SpreadOf(values);
  return absl::StrCat(format(spread.mean), " ± ", format(spread.sd));
}

// The change of `values` against `bases`, seed by seed: the mean change in the row's unit with its sign,
// then the mean relative change (± its standard deviation over seeds) when no base is zero:
// "-21.0 h (-84.0%)", "-20.5 h (-82.1% ± 3.0%)".
std::string ChangeCell(const std::vector<double>& values, const std::vector<double>& bases,
                       std::string (*format)(double)) {
  std::vector<double> changes, relative;
  for (size_t i = 0; i < values.size(); ++i) {
    changes.push_back(values[i] - bases[i]);
    if (bases[i] != 0) relative.push_back(100 * (values[i] - bases[i]) / bases[i]);
  }
  const double change = SpreadOf(changes).mean;
  std::string text = absl::StrCat(change < 0 ? "-" : change > 0 ? "+" : "", format(std::fabs(change)));
  if (!relative.empty() && relative.size() == values.size()) {
    const Spread spread = SpreadOf(relative);
    absl::StrAppend(&text, values.size() == 1 ? absl::StrFormat(" (%+.1f%%)", spread.mean)
                                              : absl::StrFormat(" (%+.1f%% ± %.1f%%)", spread.mean, spread.sd));
  }
  return text;
}

bool IsTuned(absl::string_view policy) { return policy == "tuned" || absl::StartsWith(policy, "tuned:"); }

// The "vs best tuned" block (issue 31): each policy against the best tuned configuration an operator could
// have picked for the workload — of `tuned` and every `tuned:<chain>`, the one with the lowest mean idle
// (cost) over the seeds, figure by figure, compared seed by seed — and the tuned configurations that
// dominate it: at least 3% lower on idle and on cost at once (means over the seeds), over the whole window
// and over the fill. A configuration fixed across seeds, not the luckiest one of each seed: an operator
// picks an expander, not a seed's outcome (tuned:random's spread would otherwise set the bar). Empty
// unless two tuned configurations ran.
std::vector<Row> BestTunedRows(const std::vector<std::vector<PolicySummary>>& runs) {
  std::vector<size_t> tuned;
  for (size_t i = 0; i < runs.front().size(); ++i) {
    if (IsTuned(runs.front()[i].policy)) tuned.push_back(i);
  }
  if (tuned.size() < 2) return {};
  using Member = double PolicySummary::*;
  const auto column = [&](size_t policy, Member member) {
    std::vector<double> values;
    for (const std::vector<PolicySummary>& run : runs) values.push_back(run[policy].*member);
    return values;
  };
  const auto mean = [&](size_t policy, Member member) { return SpreadOf(column(policy, member)).mean; };
  const auto best = [&](Member member) {
    return *std::min_element(tuned.begin(), tuned.end(),
                             [&](size_t a, size_t b) { return mean(a, member) < mean(b, member); });
  };
  const auto per_policy = [&](std::string label, const std::function<std::string(size_t)>& cell) {
    Row row{std::move(label), {}};
    for (size_t i = 0; i < runs.front().size(); ++i) {
      row.cells.push_back(IsTuned(runs.front()[i].policy) ? std::string() : cell(i));
    }
    return row;
  };
  std::vector<Row> rows;
  rows.emplace_back();
  rows.push_back(Row{"vs best tuned", {}});
  const auto add_change = [&](std::string label, Member member, std::string (*format)(double)) {
    const std::vector<double> bases = column(best(member), member);
    rows.push_back(per_policy(std::move(label), [&](size_t i) { return ChangeCell(column(i, member), bases, format); }));
  };
  const auto add_best = [&](std::string label, Member idle, Member cost) {
    const std::string names = absl::StrCat(runs.front()[best(idle)].policy, " / ", runs.front()[best(cost)].policy);
    rows.push_back(per_policy(std::move(label), [&](size_t) { return names; }));
  };
  add_best("best tuned (idle / cost)", &PolicySummary::idle_gpu_hours, &PolicySummary::cost_dollars);
  add_change("idle GPU-hours", &PolicySummary::idle_gpu_hours, FormatHours);
  add_change("cost", &PolicySummary::cost_dollars, FormatDollars);
  add_best("best tuned, fill (idle / cost)", &PolicySummary::fill_idle_gpu_hours, &PolicySummary::fill_cost_dollars);
  add_change("idle GPU-hours, fill", &PolicySummary::fill_idle_gpu_hours, FormatHours);
  add_change("cost, fill", &PolicySummary::fill_cost_dollars, FormatDollars);
  const auto add_dominated = [&](std::string label, Member idle, Member cost) {
    rows.push_back(per_policy(std::move(label), [&](size_t i) {
      std::vector<std::string> by;
      for (size_t j : tuned) {
        if (mean(j, idle) <= 0.97 * mean(i, idle) && mean(j, cost) <= 0.97 * mean(i, cost)) {
          by.push_back(runs.front()[j].policy);
        }
      }
      return by.empty() ? std::string("none") : absl::StrJoin(by, ", ");
    }));
  };
  add_dominated("dominated by", &PolicySummary::idle_gpu_hours, &PolicySummary::cost_dollars);
  add_dominated("dominated by, fill", &PolicySummary::fill_idle_gpu_hours, &PolicySummary::fill_cost_dollars);
  return rows;
}

std::optional<double> MultiGpuP95(const PolicySummary& s) {
  if (s.pending_multi_gpu.pods == 0) return std::nullopt;
  return s.pending_multi_gpu.p95_seconds;
}

std::string PodsLabel(int gpus) { return gpus == 0 ? "pods without GPUs" : absl::StrCat(gpus, "-GPU pods"); }

// The mean completion time of a summary's `gpus`-GPU pods, when it has any.
auto MeanCompletion(int gpus) {
  return [gpus](const PolicySummary& s) -> std::optional<double> {
    const auto completion = s.completion_by_gpus.find(gpus);
    if (completion == s.completion_by_gpus.end()) return std::nullopt;
    return completion->second.mean_hours;
  };
}

// A figure of a summary's `gpus`-GPU pods' pending times (their count, a percentile), when it has any.
template <typename T>
auto PendingOf(int gpus, T PendingPercentiles::*member) {
  return [gpus, member](const PolicySummary& s) -> std::optional<double> {
    const auto pending = s.pending_by_gpus.find(gpus);
    if (pending == s.pending_by_gpus.end()) return std::nullopt;
    return pending->second.*member;
  };
}

std::string CompletionLabel(int gpus) { return absl::StrCat("completion, ", PodsLabel(gpus), " (mean)"); }

constexpr std::pair<absl::string_view, double PendingPercentiles::*> kPercentiles[] = {
    {"p50", &PendingPercentiles::p50_seconds},
    {"p95", &PendingPercentiles::p95_seconds},
    {"p99", &PendingPercentiles::p99_seconds},
};

// The lines above the table: the workload, the seeds, and the windows every row is measured over.
std::string TableHeader(const Workload& workload, const std::vector<std::vector<PolicySummary>>& runs) {
  std::vector<std::string> seeds;
  std::vector<double> ends, busy_from, fill_from, fill_end, measure_from;
  for (const std::vector<PolicySummary>& run : runs) {
    seeds.push_back(absl::StrCat(run.front().seed));
    ends.push_back(run.front().window_hours);
    measure_from.push_back(run.front().measure_from_hours);
    busy_from.push_back(run.front().busy_from_hours);
    fill_from.push_back(run.front().fill_from_hours);
    fill_end.push_back(run.front().fill_end_hours);
  }
  std::string text = absl::StrCat("workload: ", workload.name, " (", FormatCount(static_cast<double>(workload.pods.size())),
                                  " pods, ", FormatCount(static_cast<double>(workload.groups.size())), " node groups)\n");
  if (runs.size() == 1) {
    absl::StrAppend(&text, "seed: ", seeds.front(), "\n");
  } else {
    absl::StrAppend(&text, "seeds: ", absl::StrJoin(seeds, ", "),
                    "; each cell is the mean ± the sample standard deviation over them\n");
  }
  const bool lead_in = std::any_of(measure_from.begin(), measure_from.end(), [](double hours) { return hours > 0; });
  absl::StrAppend(&text, "measuring window: [", lead_in ? Cell(measure_from, FormatHours, "") : "0", ", T), T = ",
                  Cell(ends, FormatHours, ""),
                  ", an hour after the last pod would end had each started on arrival; busy window: [",
                  Cell(busy_from, FormatHours, ""), ", T), from the arrival of the first 1% of the pods; fill: [",
                  Cell(fill_from, FormatHours, ""), ", ", Cell(fill_end, FormatHours, ""),
                  "), the first arrival to an hour after the last\n");
  if (lead_in) {
    absl::StrAppend(&text, "lead-in: measuring begins at ", Cell(measure_from, FormatHours, ""),
                    "; the pods of the first arrival time ran before it and are not among the pods counted; ",
                    "counts of events (nodes created, peak nodes, evictions, requests) cover the whole replay\n");
  }
  absl::StrAppend(&text, "\n");
  return text;
}

}  // namespace

std::string FormatTable(const Workload& workload, const std::vector<std::vector<PolicySummary>>& runs, bool legend) {
  if (runs.empty() || runs.front().empty()) return "no replays\n";
  const size_t policies = runs.front().size();
  std::vector<Row> rows;
  std::vector<std::pair<std::string, std::string>> legends;
  Row header;
  for (const PolicySummary& summary : runs.front()) header.cells.push_back(summary.policy);
  rows.push_back(std::move(header));
  const auto values_of = [&](size_t policy, const Figure& figure) {
    std::vector<double> values;
    for (const std::vector<PolicySummary>& run : runs) {
      if (std::optional<double> value = figure(run[policy])) values.push_back(*value);
    }
    return values;
  };
  const auto add = [&](std::string label, std::string what, const Figure& figure, std::string (*format)(double),
                       absl::string_view missing = "n/a") {
    Row row{label, {}};
    for (size_t i = 0; i < policies; ++i) row.cells.push_back(Cell(values_of(i, figure), format, missing));
    rows.push_back(std::move(row));
    if (!what.empty()) legends.emplace_back(std::move(label), std::move(what));
  };
  const auto gap = [&] { rows.emplace_back(); };
  const auto stranded_after = absl::StrCat(kStrandedAfter / kMinute, " min");

  add("GPU-hours provisioned", "every GPU of every node from its request to its removal (clouds bill from launch)",
      [](const PolicySummary& s) { return s.provisioned_gpu_hours; }, FormatHours);
  add("GPU-hours allocated", "GPUs held by running pods",
      [](const PolicySummary& s) { return s.allocated_gpu_hours; }, FormatHours);
  add("GPU-hours idle", "provisioned - allocated", [](const PolicySummary& s) { return s.idle_gpu_hours; },
      FormatHours);
  add("idle share", "idle / provisioned", [](const PolicySummary& s) { return s.idle_share; }, FormatShare);
  add("  idle: booting", "idle GPU-hours by reason (sampled once a minute after a change): nodes not yet Ready",
      [](const PolicySummary& s) { return s.idle_booting_gpu_hours; }, FormatHours);
  add("  idle: held for intent", "free GPUs a scale-up's intent holds for the pods it was made for",
      [](const PolicySummary& s) { return s.idle_held_for_intent_gpu_hours; }, FormatHours);
  add("  idle: awaiting scale-down", "free GPUs of nodes running nothing",
      [](const PolicySummary& s) { return s.idle_awaiting_scale_down_gpu_hours; }, FormatHours);
  add("  idle: fragmented", "free GPUs while GPU pods are pending and none of their shapes fits them",
      [](const PolicySummary& s) { return s.idle_fragmented_gpu_hours; }, FormatHours);
  add("  idle: no demand", "free GPUs nothing pending wants",
      [](const PolicySummary& s) { return s.idle_no_demand_gpu_hours; }, FormatHours);
  add("GPU-hours requested (floor)", "each GPU pod's GPUs x its ideal run time: a floor under allocated",
      [](const PolicySummary& s) { return s.requested_gpu_hours; }, FormatHours);
  add("GPU-hours idle, busy window", "idle GPU-hours from the busy window's start to T (a trace's lead-in left out)",
      [](const PolicySummary& s) { return s.busy_idle_gpu_hours; }, FormatHours);
  add("idle share, busy window", "idle / provisioned over the busy window",
      [](const PolicySummary& s) { return s.busy_idle_share; }, FormatShare);
  add("GPU-hours idle, fill", "idle GPU-hours from the first arrival to an hour after the last (the FGD paper's window)",
      [](const PolicySummary& s) { return s.fill_idle_gpu_hours; }, FormatHours);
  add("idle share, fill", "idle / provisioned over the fill",
      [](const PolicySummary& s) { return s.fill_idle_share; }, FormatShare);
  gap();
  add("cost", "each node's price per hour x the time from its request to its removal",
      [](const PolicySummary& s) { return s.cost_dollars; }, FormatDollars);
  add("cost lower bound", "each GPU pod's ideal GPU-hours at the cheapest per-GPU price of the groups it may use",
      [](const PolicySummary& s) { return s.lower_bound_cost_dollars; }, FormatDollars);
  add("cost, fill", "cost from the first arrival to an hour after the last",
      [](const PolicySummary& s) { return s.fill_cost_dollars; }, FormatDollars);
  add("node-hours", "nodes requested and not removed, integrated over time",
      [](const PolicySummary& s) { return s.node_hours; }, FormatHours);
  // Where the money went: one row per node group some policy paid for, in the workload's group order.
  bool by_group = false;
  for (const NodeGroupSpec& group : workload.groups) {
    const bool paid = std::any_of(runs.begin(), runs.end(), [&](const std::vector<PolicySummary>& run) {
      return std::any_of(run.begin(), run.end(), [&](const PolicySummary& s) { return s.by_group.count(group.name); });
    });
    if (!paid) continue;
    by_group = true;
    add(absl::StrCat("  cost: ", group.name), "",
        [name = group.name](const PolicySummary& s) {
          auto it = s.by_group.find(name);
          return it != s.by_group.end() ? it->second.cost_dollars : 0.0;
        },
        FormatDollars);
  }
  if (by_group) legends.emplace_back("cost: <group>", "what that node group's nodes cost (the rows add up to cost)");
  gap();
  add("nodes created", "nodes requested by scale-ups", [](const PolicySummary& s) { return s.nodes_created; },
      FormatCount);
  add("nodes at peak", "the most nodes requested and not removed at once",
      [](const PolicySummary& s) { return s.peak_nodes; }, FormatCount);
  add("scale-ups", "node group increases CA made", [](const PolicySummary& s) { return s.scale_ups; }, FormatCount);
  add("stranded scale-ups",
      absl::StrCat("scale-ups none of whose nodes ran a pod it was made for within ", stranded_after, " of Ready"),
      [](const PolicySummary& s) { return s.stranded_scale_ups; }, FormatCount);
  add("stranded scale-ups, overtaken",
      "of the stranded scale-ups, those whose pods had all started elsewhere before its first node was Ready",
      [](const PolicySummary& s) { return s.overtaken_scale_ups; }, FormatCount);
  add("new nodes Ready", "nodes a scale-up created that became Ready",
      [](const PolicySummary& s) { return s.new_nodes; }, FormatCount);
  add("stranded nodes",
      absl::StrCat("new nodes that ran none of the pods they were grown for within ", stranded_after, " of Ready"),
      [](const PolicySummary& s) { return s.stranded_nodes; }, FormatCount);
  add("stranded nodes, no pod at all",
      absl::StrCat("of the stranded nodes, those that ran no pod of any kind within ", stranded_after, " of Ready"),
      [](const PolicySummary& s) { return s.empty_stranded_nodes; }, FormatCount);
  add("stranded node-hours",
      "stranded nodes' hours from their request to the first pod of any kind on them (or removal, or T)",
      [](const PolicySummary& s) { return s.stranded_node_hours; }, FormatHours);
  add("ProvisioningRequests", "best-effort-atomic requests topofit created for pods refused for their topology",
      [](const PolicySummary& s) { return s.provisioning_requests; }, FormatCount);
  add("vetoes", "CA loops in which topofit's expander refused every option",
      [](const PolicySummary& s) { return s.vetoes; }, FormatCount);
  add("GPU sets not as chosen", "pods topofit's filter passed whose GPU ids the device plugin (--gpu-ids device-plugin) or the DRA allocator (--gpu-api dra) gave otherwise",
      [](const PolicySummary& s) { return s.gpu_sets_not_as_chosen; }, FormatCount);
  add("nodes that never came up", "requested nodes given up after CA's max node provision time",
      [](const PolicySummary& s) { return s.failed_nodes; }, FormatCount);
  add("pods evicted by scale-down", "pods CA's scale-down evicted to drain an underused node; each is scheduled again, its progress kept",
      [](const PolicySummary& s) { return s.evicted_pods; }, FormatCount);
  add("  multi-GPU pods evicted", "of them, pods of 2 or more GPUs (CA's drain simulation does not ask the extender)",
      [](const PolicySummary& s) { return s.evicted_multi_gpu_pods; }, FormatCount);
  gap();
  add("pods", "", [](const PolicySummary& s) { return s.pods; }, FormatCount);
  // How many pods each size's percentiles below stand on: a p95 over 16 pods is the worst pod but one.
  legends.emplace_back("<n>-GPU pods", "of the pods, those requesting n GPUs: what that size's percentiles stand on "
                                       "(of 19 pods or fewer, p95 is the worst pod's wait)");
  for (int gpus : GpuCounts(runs, &PolicySummary::pending_by_gpus)) {
    add(absl::StrCat("  ", PodsLabel(gpus)), "", PendingOf(gpus, &PendingPercentiles::pods), FormatCount, "-");
  }
  add("pods never started", "pods still pending at T; their pending time counts to T (a floor)",
      [](const PolicySummary& s) { return s.pods_never_started; }, FormatCount);
  legends.emplace_back("pending pNN, <pods>",
                       "time from a pod's creation to its first start, nearest-rank percentile over those pods");
  for (const auto& [name, member] : kPercentiles) {
    add(absl::StrCat("pending ", name, ", all pods"), "", [field = member](const PolicySummary& s) { return s.pending.*field; },
        FormatWait);
  }
  add("pending p95, multi-GPU pods", "", MultiGpuP95, FormatWait, "-");
  if (std::any_of(runs.begin(), runs.end(), [](const std::vector<PolicySummary>& run) {
        return !run.empty() && run.front().pending_bursty.pods > 0;
      })) {
    add("pending p95, inference pods", "", [](const PolicySummary& s) { return s.pending_bursty.p95_seconds; },
        FormatWait);
  }
  for (int gpus : GpuCounts(runs, &PolicySummary::pending_by_gpus)) {
    for (const auto& [name, member] : kPercentiles) {
      add(absl::StrCat("pending ", name, ", ", PodsLabel(gpus)), "", PendingOf(gpus, member), FormatWait, "-");
    }
  }
  // Gangs (only for a workload that has any): how they ran, and what waiting for the whole cost.
  const bool gangs = std::any_of(runs.begin(), runs.end(), [](const std::vector<PolicySummary>& run) {
    return std::any_of(run.begin(), run.end(), [](const PolicySummary& s) { return s.gangs > 0; });
  });
  if (gangs) {
    gap();
    add("gangs", "pods sharing a gang (topofit.io/gang, the Workload API, Kueue, LWS...): the unit placed all or nothing",
        [](const PolicySummary& s) { return s.gangs; }, FormatCount);
    add("gangs started", "gangs whose every member ran", [](const PolicySummary& s) { return s.gangs_started; },
        FormatCount);
    add("split gangs", "gangs that ran over more than the level they ask for (several NVLink domains, or nodes)",
        [](const PolicySummary& s) { return s.split_gangs; }, FormatCount);
    legends.emplace_back("gang start pNN", "a gang's creation to its last member's start (never started: to T)");
    for (const auto& [name, member] : kPercentiles) {
      add(absl::StrCat("gang start ", name), "", [field = member](const PolicySummary& s) { return s.gang_pending.*field; },
          FormatWait);
    }
    add("partial gang GPU-hours", "GPU-hours members held while their gang waited for the rest (all idle)",
        [](const PolicySummary& s) { return s.partial_gang_gpu_hours; }, FormatHours);
  }
  gap();
  const auto multi_gpu = [](double PolicySummary::*member) {
    return [member](const PolicySummary& s) -> std::optional<double> {
      if (s.multi_gpu_pods_started == 0) return std::nullopt;
      return s.*member;
    };
  };
  add("multi-GPU pods on best topology",
      "multi-GPU pods whose first set reached the best bandwidth of any group they may run on",
      multi_gpu(&PolicySummary::best_topology_share), FormatShare);
  add("mean stretch, multi-GPU pods", "run time on the set / on the best set (slowdown model, comm_fraction)",
      multi_gpu(&PolicySummary::mean_stretch), [](double x) { return absl::StrFormat("%.3fx", x); });
  add("slowdown GPU-hours", "GPU-hours beyond the ideal run time because of the GPU set (or lost throughput)",
      [](const PolicySummary& s) { return s.slowdown_gpu_hours; }, FormatHours);
  const std::set<int> completing = GpuCounts(runs, &PolicySummary::completion_by_gpus, 2);
  if (!completing.empty()) {
    legends.emplace_back("completion, <pods> (mean)",
                         "of the pods that run to completion: creation to the end of the run (pending, the run "
                         "on its set, any restart), mean; a pod not done counts as done at T");
  }
  for (int gpus : completing) add(CompletionLabel(gpus), "", MeanCompletion(gpus), FormatHours, "-");
  add("last pod done", "the policy's own last pod completion (after T: its last pods are cut at T)",
      [](const PolicySummary& s) { return s.hours; }, FormatHours);

  for (absl::string_view reference : {"tuned", "stock"}) {
    const auto base = std::find_if(runs.front().begin(), runs.front().end(),
                                   [&](const PolicySummary& s) { return s.policy == reference; });
    if (base == runs.front().end() || policies < 2) continue;
    const size_t base_index = static_cast<size_t>(base - runs.front().begin());
    gap();
    rows.push_back(Row{absl::StrCat("vs ", reference), {}});
    const auto add_change = [&](std::string label, const Figure& figure, std::string (*format)(double)) {
      Row row{std::move(label), {}};
      const std::vector<double> bases = values_of(base_index, figure);
      for (size_t i = 0; i < policies; ++i) {
        const std::vector<double> values = values_of(i, figure);
        row.cells.push_back(i == base_index || values.size() != bases.size() || values.empty()
                                ? std::string()
                                : ChangeCell(values, bases, format));
      }
      rows.push_back(std::move(row));
    };
    add_change("idle GPU-hours", [](const PolicySummary& s) { return s.idle_gpu_hours; }, FormatHours);
    add_change("cost", [](const PolicySummary& s) { return s.cost_dollars; }, FormatDollars);
    add_change("idle GPU-hours, fill", [](const PolicySummary& s) { return s.fill_idle_gpu_hours; }, FormatHours);
    add_change("cost, fill", [](const PolicySummary& s) { return s.fill_cost_dollars; }, FormatDollars);
    add_change("pending p95, all pods", [](const PolicySummary& s) { return s.pending.p95_seconds; }, FormatWait);
    add_change("pending p95, multi-GPU pods", MultiGpuP95, FormatWait);
    // The rest of issue 13's goal: each multi-GPU size on its own, and the slowdown.
    for (int gpus : GpuCounts(runs, &PolicySummary::pending_by_gpus)) {
      if (gpus < 2) continue;
      add_change(absl::StrCat("pending p95, ", PodsLabel(gpus)), PendingOf(gpus, &PendingPercentiles::p95_seconds),
                 FormatWait);
    }
    add_change("slowdown GPU-hours", [](const PolicySummary& s) { return s.slowdown_gpu_hours; }, FormatHours);
    if (gangs) {
      add_change("gang start p95", [](const PolicySummary& s) { return s.gang_pending.p95_seconds; }, FormatWait);
      add_change("partial gang GPU-hours", [](const PolicySummary& s) { return s.partial_gang_gpu_hours; }, FormatHours);
    }
    for (int gpus : completing) add_change(CompletionLabel(gpus), MeanCompletion(gpus), FormatHours);
  }
  std::vector<Row> best_tuned = BestTunedRows(runs);
  if (!best_tuned.empty()) {
    legends.emplace_back("vs best tuned",
                         "against the tuned configuration with the lowest mean of that figure, seed by seed");
    legends.emplace_back("dominated by", "tuned configurations at least 3% lower on idle and on cost at once (seed means)");
  }
  for (Row& row : best_tuned) rows.push_back(std::move(row));
  std::string text = absl::StrCat(TableHeader(workload, runs), Render(rows));
  if (legend) {
    absl::StrAppend(&text, "\nlegend (every row over [0, T) unless it says otherwise; \"vs X\": the change against "
                           "policy X, seed by seed):\n");
    for (const auto& [label, what] : legends) absl::StrAppend(&text, "  ", label, ": ", what, "\n");
  }
  return text;
}

bool GnuplotOnPath() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

absl::StatusOr<std::vector<std::string>> WriteReport(const std::string& dir, const Comparison& comparison) {
  if (comparison.seeds.empty() || comparison.seeds.front().results.empty() ||
      comparison.seeds.front().results.size() != comparison.seeds.front().summaries.size()) {
    return absl::InvalidArgumentError("a report needs the first seed's replays beside their summaries");
  }
  const fs::path root(dir);
  std::error_code error;
  fs::create_directories(root, error);
  if (error) return absl::ErrnoToStatus(error.value(), absl::StrCat("cannot create report directory ", dir));

  const SeedComparison& first = comparison.seeds.front();
  std::vector<std::vector<PolicySummary>> runs;
  for (const SeedComparison& seed : comparison.seeds) runs.push_back(seed.summaries);
  std::vector<std::pair<absl::string_view, std::string>> files = {
      {"summary.csv", SummaryCsv(runs)},
      {"summary.json", SummaryJson(comparison.workload, runs)},
      {"timeline.csv", TimelineCsv(first.results, first.window.end)},
      {"pending_cdf.csv", PendingCdfCsv(first.results)},
      {kGpusOverTime.script, GpusOverTimeScript(comparison.workload, first.results, first.window.end)},
      {kPendingCdf.script, PendingCdfScript(comparison.workload, first.results)},
  };
  std::vector<Plot> plots = {kGpusOverTime, kPendingCdf};
  if (HasBurstyPods(runs)) {
    files.emplace_back("headroom_frontier.csv", HeadroomFrontierCsv(runs));
    files.emplace_back(kHeadroomFrontier.script, HeadroomFrontierScript(comparison.workload));
    plots.push_back(kHeadroomFrontier);
  }
  std::vector<std::string> written;
  for (const auto& [name, content] : files) {
    const fs::path path = root / std::string(name);
    if (absl::Status status = WriteFile(path, content); !status.ok()) return status;
    written.push_back(path.string());
  }
  if (GnuplotOnPath()) {
    for (const Plot& plot : plots) {
      if (Draw(root, plot)) written.push_back((root / std::string(plot.svg)).string());
    }
  }
  return written;
}

}  // namespace topofit::sim
