#pragma once

// A small Prometheus registry rendering the text exposition format 0.0.4.
//
// Each component declares its metrics once, in one struct built from the registry (see HttpMetrics in
// http_server.h), and the registry renders them for /metrics. A metric is a family with fixed label names;
// it holds one value (or histogram) per tuple of label values. Output order is deterministic: families in
// registration order, then series sorted by label values.
//
// Registering a name that already exists returns the existing family when type, help and label names
// agree (two servers in one process share `topofit_http_requests_total`); a mismatch, or passing the wrong
// number of label values, is a programming error and aborts with a message.

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace topofit::server {

using LabelValues = std::vector<std::string>;

// The state shared by the three metric kinds: name, help, label names and the per-label-values cells.
// The mutex guards only the map lookup; updating a value is an atomic operation on a stable cell.
template <typename Cell>
class MetricFamily {
 public:
  MetricFamily(std::string name, std::string help, std::vector<std::string> label_names)
      : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)) {}
  MetricFamily(const MetricFamily&) = delete;
  MetricFamily& operator=(const MetricFamily&) = delete;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& label_names() const { return label_names_; }

 protected:
  // Creates the cell on first use; the reference stays valid for the life of the family.
  template <typename... Args>
  Cell& CellFor(const LabelValues& values, const Args&... args) const;
  // Null when the series has never been touched.
  const Cell* FindCell(const LabelValues& values) const;

  // Calls fn(values, cell) for every series in label-value order.
  template <typename Fn>
  void ForEachCell(Fn fn) const;

 private:
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> label_names_;
  mutable absl::Mutex mu_;
  mutable std::map<LabelValues, std::unique_ptr<Cell>> cells_ ABSL_GUARDED_BY(mu_);
};

struct ScalarCell {
  std::atomic<double> value{0};
};

// A monotonically increasing value.
class Counter : public MetricFamily<ScalarCell> {
 public:
  using MetricFamily::MetricFamily;
  void Inc(const LabelValues& values = {}, double delta = 1);
  // 0 for a series never touched. For tests and for the code that renders.
  double Value(const LabelValues& values = {}) const;
  void Render(std::string& out) const;
};

// A value that goes up and down.
class Gauge : public MetricFamily<ScalarCell> {
 public:
  using MetricFamily::MetricFamily;
  void Set(double value, const LabelValues& values = {});
  void Add(double delta, const LabelValues& values = {});
  double Value(const LabelValues& values = {}) const;
  void Render(std::string& out) const;
};

struct HistogramCell {
  explicit HistogramCell(size_t bucket_count) : counts(bucket_count + 1) {}  // + the +Inf bucket
  std::vector<std::atomic<uint64_t>> counts;  // per bucket, not cumulative; the last one is +Inf
  std::atomic<double> sum{0};
};

// Observations counted into explicit upper bounds (`le`), rendered cumulatively with `+Inf`, `_sum` and
// `_count`.
class Histogram : public MetricFamily<HistogramCell> {
 public:
  Histogram(std::string name, std::string help, std::vector<std::string> label_names,
            std::vector<double> buckets);
  void Observe(double value, const LabelValues& values = {});
  // Observations so far for one series (0 if never touched).
  uint64_t Count(const LabelValues& values = {}) const;
  double Sum(const LabelValues& values = {}) const;
  const std::vector<double>& buckets() const { return buckets_; }
  void Render(std::string& out) const;

 private:
  const std::vector<double> buckets_;  // strictly increasing, finite
};

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  Counter& AddCounter(const std::string& name, const std::string& help,
                      std::vector<std::string> label_names = {});
  Gauge& AddGauge(const std::string& name, const std::string& help,
                  std::vector<std::string> label_names = {});
  // `buckets` must be strictly increasing and finite; +Inf is implicit.
  Histogram& AddHistogram(const std::string& name, const std::string& help, std::vector<double> buckets,
                          std::vector<std::string> label_names = {});

  // Every family, text exposition format 0.0.4. The refreshers run first, in registration order.
  std::string Render() const;
  // Called at every Render, before the families are written: for values read when scraped (a process's
  // CPU time and memory) rather than kept up to date. Must not call Render.
  void OnRender(std::function<void()> refresh);

 private:
  struct Entry {
    std::string type;  // "counter", "gauge", "histogram"
    std::unique_ptr<Counter> counter;
    std::unique_ptr<Gauge> gauge;
    std::unique_ptr<Histogram> histogram;
  };
  const Entry* Find(const std::string& name) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);  // registration order
  std::vector<std::function<void()>> refreshers_ ABSL_GUARDED_BY(mu_);
};

// The content type /metrics answers with.
inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4; charset=utf-8";

namespace metrics_internal {
[[noreturn]] void Die(const std::string& message);
}  // namespace metrics_internal

template <typename Cell>
template <typename... Args>
Cell& MetricFamily<Cell>::CellFor(const LabelValues& values, const Args&... args) const {
  if (values.size() != label_names_.size()) {
    metrics_internal::Die("metric " + name_ + ": " + std::to_string(values.size()) +
                          " label values for " + std::to_string(label_names_.size()) + " label names");
  }
  absl::MutexLock lock(&mu_);
  auto it = cells_.find(values);
  if (it == cells_.end()) it = cells_.emplace(values, std::make_unique<Cell>(args...)).first;
  return *it->second;
}

template <typename Cell>
const Cell* MetricFamily<Cell>::FindCell(const LabelValues& values) const {
  absl::MutexLock lock(&mu_);
  auto it = cells_.find(values);
  return it == cells_.end() ? nullptr : it->second.get();
}

template <typename Cell>
template <typename Fn>
void MetricFamily<Cell>::ForEachCell(Fn fn) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [values, cell] : cells_) fn(values, *cell);
}

}  // namespace topofit::server
