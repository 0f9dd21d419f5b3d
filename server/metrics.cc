#include "server/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace topofit::server {
namespace metrics_internal {

void Die(const std::string& message) {
  std::fprintf(stderr, "topofit metrics: %s\n", message.c_str());
  std::abort();
}

}  // namespace metrics_internal
namespace {

using metrics_internal::Die;

// Prometheus renders numbers as Go's strconv.FormatFloat(v, 'g', -1, 64) does: the shortest text that
// reads back to the same double; integers without a decimal point.
std::string FormatNumber(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) return "NaN";  // unreachable: 64 bytes hold any double
  return std::string(buf, end);
}

void AppendEscapedLabelValue(std::string& out, const std::string& value) {
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
}

// HELP text escapes backslash and newline only (the format leaves quotes alone there).
void AppendEscapedHelp(std::string& out, const std::string& help) {
  for (char c : help) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
}

void AppendHeader(std::string& out, const std::string& name, const std::string& help, const char* type) {
  absl::StrAppend(&out, "# HELP ", name, " ");
  AppendEscapedHelp(out, help);
  absl::StrAppend(&out, "\n# TYPE ", name, " ", type, "\n");
}

// `name{a="x",b="y"} value`, with an optional extra label (histograms' `le`) last.
void AppendSample(std::string& out, const std::string& name, const std::vector<std::string>& label_names,
                  const LabelValues& values, double value, const char* extra_name = nullptr,
                  const std::string& extra_value = "") {
  out += name;
  if (!label_names.empty() || extra_name != nullptr) {
    out += '{';
    for (size_t i = 0; i < label_names.size(); ++i) {
      if (i > 0) out += ',';
      absl::StrAppend(&out, label_names[i], "=\"");
      AppendEscapedLabelValue(out, values[i]);
      out += '"';
    }
    if (extra_name != nullptr) {
      if (!label_names.empty()) out += ',';
      absl::StrAppend(&out, extra_name, "=\"", extra_value, "\"");
    }
    out += '}';
  }
  absl::StrAppend(&out, " ", FormatNumber(value), "\n");
}

bool ValidName(const std::string& name, bool allow_colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':') ||
                    (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

void CheckNames(const std::string& name, const std::vector<std::string>& label_names, bool histogram) {
  if (!ValidName(name, /*allow_colon=*/true)) Die("invalid metric name '" + name + "'");
  for (const auto& label : label_names) {
    if (!ValidName(label, /*allow_colon=*/false) || label.rfind("__", 0) == 0) {
      Die("metric " + name + ": invalid label name '" + label + "'");
    }
    if (histogram && label == "le") Die("metric " + name + ": 'le' is reserved in histograms");
  }
}

void AtomicAdd(std::atomic<double>& a, double delta) { a.fetch_add(delta, std::memory_order_relaxed); }

}  // namespace

void Counter::Inc(const LabelValues& values, double delta) {
  if (!(delta >= 0)) Die("counter " + name() + " decremented");
  AtomicAdd(CellFor(values).value, delta);
}

double Counter::Value(const LabelValues& values) const {
  const ScalarCell* cell = FindCell(values);
  return cell == nullptr ? 0 : cell->value.load(std::memory_order_relaxed);
}

void Counter::Render(std::string& out) const {
  if (label_names().empty()) CellFor({});  // an unlabeled counter shows 0 before its first Inc
  AppendHeader(out, name(), help(), "counter");
  ForEachCell([&](const LabelValues& values, const ScalarCell& cell) {
    AppendSample(out, name(), label_names(), values, cell.value.load(std::memory_order_relaxed));
  });
}

void Gauge::Set(double value, const LabelValues& values) {
  CellFor(values).value.store(value, std::memory_order_relaxed);
}

void Gauge::Add(double delta, const LabelValues& values) { AtomicAdd(CellFor(values).value, delta); }

double Gauge::Value(const LabelValues& values) const {
  const ScalarCell* cell = FindCell(values);
  return cell == nullptr ? 0 : cell->value.load(std::memory_order_relaxed);
}

void Gauge::Render(std::string& out) const {
  if (label_names().empty()) CellFor({});
  AppendHeader(out, name(), help(), "gauge");
  ForEachCell([&](const LabelValues& values, const ScalarCell& cell) {
    AppendSample(out, name(), label_names(), values, cell.value.load(std::memory_order_relaxed));
  });
}

Histogram::Histogram(std::string name, std::string help, std::vector<std::string> label_names,
                     std::vector<double> buckets)
    : MetricFamily(std::move(name), std::move(help), std::move(label_names)), buckets_(std::move(buckets)) {
  for (size_t i = 0; i < buckets_.size(); ++i) {
    if (!std::isfinite(buckets_[i]) || (i > 0 && !(buckets_[i - 1] < buckets_[i]))) {
      Die("histogram " + this->name() + ": buckets must be finite and strictly increasing");
    }
  }
}

void Histogram::Observe(double value, const LabelValues& values) {
  HistogramCell& cell = CellFor(values, buckets_.size());
  // The first bucket whose upper bound holds the value; past the end is the +Inf bucket.
  const size_t i = std::lower_bound(buckets_.begin(), buckets_.end(), value) - buckets_.begin();
  cell.counts[i].fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(cell.sum, value);
}

uint64_t Histogram::Count(const LabelValues& values) const {
  const HistogramCell* cell = FindCell(values);
  if (cell == nullptr) return 0;
  uint64_t total = 0;
  for (const auto& c : cell->counts) total += c.load(std::memory_order_relaxed);
  return total;
}

double Histogram::Sum(const LabelValues& values) const {
  const HistogramCell* cell = FindCell(values);
  return cell == nullptr ? 0 : cell->sum.load(std::memory_order_relaxed);
}

void Histogram::Render(std::string& out) const {
  if (label_names().empty()) CellFor({}, buckets_.size());
  AppendHeader(out, name(), help(), "histogram");
  const std::string bucket_name = name() + "_bucket";
  ForEachCell([&](const LabelValues& values, const HistogramCell& cell) {
    // _count is the +Inf bucket by construction, so a scrape racing an Observe stays self-consistent.
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= buckets_.size(); ++i) {
      cumulative += cell.counts[i].load(std::memory_order_relaxed);
      const std::string le = i < buckets_.size() ? FormatNumber(buckets_[i]) : "+Inf";
      AppendSample(out, bucket_name, label_names(), values, static_cast<double>(cumulative), "le", le);
    }
    AppendSample(out, name() + "_sum", label_names(), values, cell.sum.load(std::memory_order_relaxed));
    AppendSample(out, name() + "_count", label_names(), values, static_cast<double>(cumulative));
  });
}

const MetricsRegistry::Entry* MetricsRegistry::Find(const std::string& name) const {
  for (const Entry& e : entries_) {
    const std::string& existing = e.counter ? e.counter->name() : e.gauge ? e.gauge->name() : e.histogram->name();
    if (existing == name) return &e;
  }
  return nullptr;
}

namespace {

// A second registration must describe the same metric; anything else is two components disagreeing.
template <typename Family>
void CheckSame(const Family& existing, const std::string& help, const std::vector<std::string>& label_names) {
  if (existing.help() != help || existing.label_names() != label_names) {
    Die("metric " + existing.name() + " registered twice with different help or labels");
  }
}

}  // namespace

Counter& MetricsRegistry::AddCounter(const std::string& name, const std::string& help,
                                     std::vector<std::string> label_names) {
  CheckNames(name, label_names, /*histogram=*/false);
  absl::MutexLock lock(&mu_);
  if (const Entry* e = Find(name)) {
    if (!e->counter) Die("metric " + name + " registered as " + e->type + " and counter");
    CheckSame(*e->counter, help, label_names);
    return *e->counter;
  }
  Entry& e = entries_.emplace_back();
  e.type = "counter";
  e.counter = std::make_unique<Counter>(name, help, std::move(label_names));
  return *e.counter;
}

Gauge& MetricsRegistry::AddGauge(const std::string& name, const std::string& help,
                                 std::vector<std::string> label_names) {
  CheckNames(name, label_names, /*histogram=*/false);
  absl::MutexLock lock(&mu_);
  if (const Entry* e = Find(name)) {
    if (!e->gauge) Die("metric " + name + " registered as " + e->type + " and gauge");
    CheckSame(*e->gauge, help, label_names);
    return *e->gauge;
  }
  Entry& e = entries_.emplace_back();
  e.type = "gauge";
  e.gauge = std::make_unique<Gauge>(name, help, std::move(label_names));
  return *e.gauge;
}

Histogram& MetricsRegistry::AddHistogram(const std::string& name, const std::string& help,
                                         std::vector<double> buckets, std::vector<std::string> label_names) {
  CheckNames(name, label_names, /*histogram=*/true);
  absl::MutexLock lock(&mu_);
  if (const Entry* e = Find(name)) {
    if (!e->histogram) Die("metric " + name + " registered as " + e->type + " and histogram");
    CheckSame(*e->histogram, help, label_names);
    if (e->histogram->buckets() != buckets) Die("histogram " + name + " registered twice with other buckets");
    return *e->histogram;
  }
  Entry& e = entries_.emplace_back();
  e.type = "histogram";
  e.histogram = std::make_unique<Histogram>(name, help, std::move(label_names), std::move(buckets));
  return *e.histogram;
}

void MetricsRegistry::OnRender(std::function<void()> refresh) {
  absl::MutexLock lock(&mu_);
  refreshers_.push_back(std::move(refresh));
}

std::string MetricsRegistry::Render() const {
  std::vector<std::function<void()>> refreshers;
  {
    absl::MutexLock lock(&mu_);
    refreshers = refreshers_;
  }
  for (const std::function<void()>& refresh : refreshers) refresh();  // outside the lock: they set families
  std::string out;
  absl::MutexLock lock(&mu_);
  for (const Entry& e : entries_) {
    if (e.counter) e.counter->Render(out);
    if (e.gauge) e.gauge->Render(out);
    if (e.histogram) e.histogram->Render(out);
  }
  return out;
}

}  // namespace topofit::server
