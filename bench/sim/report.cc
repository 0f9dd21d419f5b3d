#include "bench/sim/report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <system_error>
#include <utility>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
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

// `value - base` in the row's unit with its sign, then relative to the base when that is not zero:
// "-21.0 h (-84.0%)".
std::string FormatChange(double value, double base, std::string (*format)(double)) {
  const double change = value - base;
  std::string text = absl::StrCat(change < 0 ? "-" : change > 0 ? "+" : "", format(std::fabs(change)));
  if (base != 0) absl::StrAppend(&text, absl::StrFormat(" (%+.1f%%)", 100 * change / base));
  return text;
}

std::string PodsLabel(int gpus) { return gpus == 0 ? "pods without GPUs" : absl::StrCat(gpus, "-GPU pods"); }

constexpr std::pair<absl::string_view, double PendingPercentiles::*> kPercentiles[] = {
    {"p50", &PendingPercentiles::p50_seconds},
    {"p95", &PendingPercentiles::p95_seconds},
    {"p99", &PendingPercentiles::p99_seconds},
};

// The GPU counts any summary has pending times for, ascending.
std::set<int> GpuCounts(const std::vector<PolicySummary>& summaries) {
  std::set<int> counts;
  for (const PolicySummary& summary : summaries) {
    for (const auto& [gpus, pending] : summary.pending_by_gpus) counts.insert(gpus);
  }
  return counts;
}

// A table row: its label, then a cell per policy. A gap between sections has neither.
struct Row {
  std::string label;
  std::vector<std::string> cells;
};

// Labels left-aligned, cells right-aligned under their column's widest entry.
std::string Render(const std::vector<Row>& rows) {
  size_t label_width = 0;
  std::vector<size_t> cell_widths;
  for (const Row& row : rows) {
    label_width = std::max(label_width, row.label.size());
    if (cell_widths.size() < row.cells.size()) cell_widths.resize(row.cells.size());
    for (size_t i = 0; i < row.cells.size(); ++i) cell_widths[i] = std::max(cell_widths[i], row.cells[i].size());
  }
  std::string out;
  for (const Row& row : rows) {
    if (row.cells.empty()) {
      absl::StrAppend(&out, row.label, "\n");
      continue;
    }
    absl::StrAppend(&out, absl::StrFormat("%-*s", static_cast<int>(label_width), row.label));
    for (size_t i = 0; i < row.cells.size(); ++i) {
      absl::StrAppend(&out, absl::StrFormat("  %*s", static_cast<int>(cell_widths[i]), row.cells[i]));
    }
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

// Every number in PolicySummary outside its pending times, in declaration order.
constexpr Field<PolicySummary> kSummaryFields[] = {
    {"provisioned_gpu_hours", &PolicySummary::provisioned_gpu_hours},
    {"allocated_gpu_hours", &PolicySummary::allocated_gpu_hours},
    {"idle_gpu_hours", &PolicySummary::idle_gpu_hours},
    {"idle_share", &PolicySummary::idle_share},
    {"scale_ups", &PolicySummary::scale_ups},
    {"stranded_scale_ups", &PolicySummary::stranded_scale_ups},
    {"nodes_created", &PolicySummary::nodes_created},
    {"peak_nodes", &PolicySummary::peak_nodes},
    {"provisioning_requests", &PolicySummary::provisioning_requests},
    {"vetoes", &PolicySummary::vetoes},
    {"failed_nodes", &PolicySummary::failed_nodes},
    {"pods", &PolicySummary::pods},
    {"pods_never_started", &PolicySummary::pods_never_started},
    {"multi_gpu_pods_started", &PolicySummary::multi_gpu_pods_started},
    {"best_topology_share", &PolicySummary::best_topology_share},
    {"mean_stretch", &PolicySummary::mean_stretch},
    {"slowdown_gpu_hours", &PolicySummary::slowdown_gpu_hours},
    {"cost_dollars", &PolicySummary::cost_dollars},
    {"lower_bound_cost_dollars", &PolicySummary::lower_bound_cost_dollars},
    {"requested_gpu_hours", &PolicySummary::requested_gpu_hours},
    {"hours", &PolicySummary::hours},
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
  for (const Field<PolicySummary>& field : kSummaryFields) json[std::string(field.name)] = ValueOf(summary, field);
  json["pending"] = PendingJson(summary.pending);
  Json by_gpus = Json::object();
  for (const auto& [gpus, pending] : summary.pending_by_gpus) by_gpus[std::to_string(gpus)] = PendingJson(pending);
  json["pending_by_gpus"] = std::move(by_gpus);
  return json;
}

std::string SummaryJson(const Workload& workload, const std::vector<PolicySummary>& summaries) {
  Json json = Json::object();
  json["workload"] = {{"name", workload.name},
                      {"description", workload.description},
                      {"node_groups", workload.groups.size()},
                      {"pods", workload.pods.size()}};
  Json policies = Json::array();
  for (const PolicySummary& summary : summaries) policies.push_back(PolicyJson(summary));
  json["policies"] = std::move(policies);
  return json.dump(2) + "\n";
}

// A CSV field, quoted when it holds a separator, a quote or a line break (RFC 4180).
std::string CsvField(absl::string_view text) {
  if (text.find_first_of(",\"\r\n") == absl::string_view::npos) return std::string(text);
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\"", "\"\""}}), "\"");
}

// Numbers as the JSON writes them: exact for integers, the shortest text that reads back the same double.
std::string SummaryCsv(const std::vector<PolicySummary>& summaries) {
  const std::set<int> gpu_counts = GpuCounts(summaries);
  std::vector<std::string> header = {"policy"};
  for (const Field<PolicySummary>& field : kSummaryFields) header.emplace_back(field.name);
  for (const Field<PendingPercentiles>& field : kPendingFields) header.push_back(absl::StrCat("pending_", field.name));
  for (int gpus : gpu_counts) {
    for (const Field<PendingPercentiles>& field : kPendingFields) {
      header.push_back(absl::StrCat("pending_", gpus, "gpu_", field.name));
    }
  }
  std::string csv = absl::StrCat(absl::StrJoin(header, ","), "\n");
  for (const PolicySummary& summary : summaries) {
    std::vector<std::string> cells = {CsvField(summary.policy)};
    for (const Field<PolicySummary>& field : kSummaryFields) cells.push_back(ValueOf(summary, field).dump());
    for (const Field<PendingPercentiles>& field : kPendingFields) {
      cells.push_back(ValueOf(summary.pending, field).dump());
    }
    for (int gpus : gpu_counts) {
      const auto pending = summary.pending_by_gpus.find(gpus);
      for (const Field<PendingPercentiles>& field : kPendingFields) {
        cells.push_back(pending == summary.pending_by_gpus.end() ? "" : ValueOf(pending->second, field).dump());
      }
    }
    absl::StrAppend(&csv, absl::StrJoin(cells, ","), "\n");
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

// At most kMaxTimelinePoints, from equal slices of the replay's time; the timeline is in time order.
std::vector<TimelinePoint> DownsampledTimeline(const std::vector<TimelinePoint>& timeline) {
  if (timeline.size() <= kMaxTimelinePoints) return timeline;
  const SimTime first = timeline.front().at;
  const SimTime span = timeline.back().at - first + 1;
  return LastOfEachBucket(timeline, [&](const TimelinePoint& point) {
    return (point.at - first) * static_cast<SimTime>(kMaxTimelinePoints) / span;
  });
}

std::string TimelineCsv(const std::vector<ReplayResult>& results) {
  std::string csv = "policy,time_hours,provisioned_gpus,allocated_gpus,pending_pods,nodes\n";
  for (const ReplayResult& result : results) {
    const std::string policy = CsvField(result.policy);
    for (const TimelinePoint& point : DownsampledTimeline(result.timeline)) {
      absl::StrAppend(&csv, absl::StrFormat("%s,%.4f,%d,%d,%d,%d\n", policy, Hours(point.at), point.provisioned_gpus,
                                            point.allocated_gpus, point.pending_pods, point.nodes));
    }
  }
  return csv;
}

// A step of the pending-time CDF: `started` pods had started within `wait`.
struct CdfStep {
  SimTime wait = 0;
  size_t started = 0;
};

// One step per distinct wait, then at most kMaxPendingCdfPoints of them from equal slices of the pods.
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
  return LastOfEachBucket(distinct, [&](const CdfStep& step) {
    return (step.started - 1) * kMaxPendingCdfPoints / waits.size();
  });
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

// A double-quoted gnuplot string.
std::string GnuplotString(absl::string_view text) {
  return absl::StrCat("\"", absl::StrReplaceAll(text, {{"\\", "\\\\"}, {"\"", "\\\""}}), "\"");
}

// The settings both plots share. Text is not "enhanced": policy and trace names hold underscores.
std::string ScriptHead(const Plot& plot, absl::string_view title) {
  return absl::StrCat("# Written by `topofit bench --out`; run `gnuplot ", plot.script, "` in this directory.\n",
                      "set terminal svg size 1000,600 dynamic noenhanced font \"sans,12\" background rgb \"white\"\n",
                      "set output ", GnuplotString(plot.svg), "\n",
                      "set datafile separator \",\"\n",
                      "set datafile columnheaders\n",
                      "set key outside right top\n",
                      "set grid\n",
                      "set title ", GnuplotString(title), "\n");
}

// One colour per policy; each policy's rows are contiguous in the CSV, so filtering the others out
// (1/0 is gnuplot's undefined value) leaves its line unbroken.
std::string GpusOverTimeScript(const Workload& workload, const std::vector<ReplayResult>& results) {
  std::string script = ScriptHead(kGpusOverTime, absl::StrCat("GPUs provisioned (solid) and allocated (dashed): ",
                                                              workload.name));
  absl::StrAppend(&script, "set xlabel \"time (hours)\"\nset ylabel \"GPUs\"\nset yrange [0:*]\nplot \\\n");
  std::vector<std::string> lines;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string policy = GnuplotString(results[i].policy);
    lines.push_back(absl::StrFormat(
        "  \"timeline.csv\" using 2:(strcol(1) eq %s ? $3 : 1/0) with steps lc %d dt 1 lw 2 title %s", policy, i + 1,
        GnuplotString(absl::StrCat(results[i].policy, " provisioned"))));
    lines.push_back(absl::StrFormat(
        "  \"timeline.csv\" using 2:(strcol(1) eq %s ? $4 : 1/0) with steps lc %d dt 2 lw 2 title %s", policy, i + 1,
        GnuplotString(absl::StrCat(results[i].policy, " allocated"))));
  }
  absl::StrAppend(&script, absl::StrJoin(lines, ", \\\n"), "\n");
  return script;
}

// A log axis has no place for a zero wait: the curve starts at the first pod that waited at all, at the
// share of pods that did not.
std::string PendingCdfScript(const Workload& workload, const std::vector<ReplayResult>& results) {
  std::string script = ScriptHead(kPendingCdf, absl::StrCat("Pending time CDF: ", workload.name));
  absl::StrAppend(&script,
                  "set logscale x\nset xlabel \"time from creation to start (seconds)\"\n"
                  "set ylabel \"share of pods started\"\nset yrange [0:1]\nplot \\\n");
  std::vector<std::string> lines;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string policy = GnuplotString(results[i].policy);
    lines.push_back(absl::StrFormat(
        "  \"pending_cdf.csv\" using (strcol(1) eq %s && $2 > 0 ? $2 : 1/0):3 with steps lc %d lw 2 title %s", policy,
        i + 1, policy));
  }
  absl::StrAppend(&script, absl::StrJoin(lines, ", \\\n"), "\n");
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

}  // namespace

std::string FormatTable(const Workload& workload, const std::vector<PolicySummary>& summaries) {
  std::vector<Row> rows;
  Row header;
  for (const PolicySummary& summary : summaries) header.cells.push_back(summary.policy);
  rows.push_back(std::move(header));
  const auto add = [&](std::string label, const auto& cell) {
    Row row{std::move(label), {}};
    for (const PolicySummary& summary : summaries) row.cells.push_back(cell(summary));
    rows.push_back(std::move(row));
  };
  const auto gap = [&] { rows.emplace_back(); };

  add("GPU-hours provisioned", [](const PolicySummary& s) { return FormatHours(s.provisioned_gpu_hours); });
  add("GPU-hours allocated", [](const PolicySummary& s) { return FormatHours(s.allocated_gpu_hours); });
  add("GPU-hours idle", [](const PolicySummary& s) { return FormatHours(s.idle_gpu_hours); });
  add("idle share", [](const PolicySummary& s) { return FormatShare(s.idle_share); });
  add("GPU-hours requested (floor)", [](const PolicySummary& s) { return FormatHours(s.requested_gpu_hours); });
  gap();
  add("cost", [](const PolicySummary& s) { return FormatDollars(s.cost_dollars); });
  add("cost lower bound", [](const PolicySummary& s) { return FormatDollars(s.lower_bound_cost_dollars); });
  gap();
  add("nodes created", [](const PolicySummary& s) { return FormatCount(s.nodes_created); });
  add("nodes at peak", [](const PolicySummary& s) { return FormatCount(s.peak_nodes); });
  add("scale-ups", [](const PolicySummary& s) { return FormatCount(s.scale_ups); });
  add("stranded scale-ups", [](const PolicySummary& s) { return FormatCount(s.stranded_scale_ups); });
  add("ProvisioningRequests", [](const PolicySummary& s) { return FormatCount(s.provisioning_requests); });
  add("vetoes", [](const PolicySummary& s) { return FormatCount(s.vetoes); });
  add("nodes that never came up", [](const PolicySummary& s) { return FormatCount(s.failed_nodes); });
  gap();
  add("pods", [](const PolicySummary& s) { return FormatCount(s.pods); });
  add("pods never started", [](const PolicySummary& s) { return FormatCount(s.pods_never_started); });
  for (const auto& [name, member] : kPercentiles) {
    add(absl::StrCat("pending ", name, ", all pods"),
        [&](const PolicySummary& s) { return FormatWait(s.pending.*member); });
  }
  for (int gpus : GpuCounts(summaries)) {
    for (const auto& [name, member] : kPercentiles) {
      add(absl::StrCat("pending ", name, ", ", PodsLabel(gpus)), [&](const PolicySummary& s) {
        const auto pending = s.pending_by_gpus.find(gpus);
        return pending == s.pending_by_gpus.end() ? std::string("-") : FormatWait(pending->second.*member);
      });
    }
  }
  gap();
  add("multi-GPU pods on best topology", [](const PolicySummary& s) {
    return s.multi_gpu_pods_started > 0 ? FormatShare(s.best_topology_share) : std::string("n/a");
  });
  add("mean stretch, multi-GPU pods", [](const PolicySummary& s) {
    return s.multi_gpu_pods_started > 0 ? absl::StrFormat("%.3fx", s.mean_stretch) : std::string("n/a");
  });
  add("slowdown GPU-hours", [](const PolicySummary& s) { return FormatHours(s.slowdown_gpu_hours); });
  add("replay length", [](const PolicySummary& s) { return FormatHours(s.hours); });

  const auto baseline = std::find_if(summaries.begin(), summaries.end(),
                                     [](const PolicySummary& s) { return s.policy == "baseline"; });
  if (baseline != summaries.end() && summaries.size() > 1) {
    gap();
    rows.push_back(Row{"vs baseline", {}});
    const auto add_change = [&](std::string label, double (*value)(const PolicySummary&),
                                std::string (*format)(double)) {
      add(std::move(label), [&](const PolicySummary& s) {
        return &s == &*baseline ? std::string() : FormatChange(value(s), value(*baseline), format);
      });
    };
    add_change("idle GPU-hours", [](const PolicySummary& s) { return s.idle_gpu_hours; }, FormatHours);
    add_change("cost", [](const PolicySummary& s) { return s.cost_dollars; }, FormatDollars);
    add_change("pending p95, all pods", [](const PolicySummary& s) { return s.pending.p95_seconds; }, FormatWait);
  }
  return absl::StrCat("workload: ", workload.name, " (", FormatCount(static_cast<double>(workload.pods.size())),
                      " pods, ", FormatCount(static_cast<double>(workload.groups.size())), " node groups)\n\n",
                      Render(rows));
}

bool GnuplotOnPath() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

absl::StatusOr<std::vector<std::string>> WriteReport(const std::string& dir, const Workload& workload,
                                                      const std::vector<ReplayResult>& results,
                                                      const std::vector<PolicySummary>& summaries) {
  if (results.empty() || results.size() != summaries.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a report needs a summary for each replay, got %d replays and %d summaries", results.size(), summaries.size()));
  }
  const fs::path root(dir);
  std::error_code error;
  fs::create_directories(root, error);
  if (error) return absl::ErrnoToStatus(error.value(), absl::StrCat("cannot create report directory ", dir));

  const std::pair<absl::string_view, std::string> files[] = {
      {"summary.csv", SummaryCsv(summaries)},
      {"summary.json", SummaryJson(workload, summaries)},
      {"timeline.csv", TimelineCsv(results)},
      {"pending_cdf.csv", PendingCdfCsv(results)},
      {kGpusOverTime.script, GpusOverTimeScript(workload, results)},
      {kPendingCdf.script, PendingCdfScript(workload, results)},
  };
  std::vector<std::string> written;
  for (const auto& [name, content] : files) {
    const fs::path path = root / std::string(name);
    if (absl::Status status = WriteFile(path, content); !status.ok()) return status;
    written.push_back(path.string());
  }
  if (GnuplotOnPath()) {
    for (const Plot& plot : {kGpusOverTime, kPendingCdf}) {
      if (Draw(root, plot)) written.push_back((root / std::string(plot.svg)).string());
    }
  }
  return written;
}

}  // namespace topofit::sim
