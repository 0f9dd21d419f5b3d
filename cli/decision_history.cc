#include "cli/decision_history.h"

#include <limits>

#include "server/logging.h"

namespace topofit::cli {

void AddDecisionDbFlag(CLI::App& cmd, std::string& path, int64_t& max_bytes) {
  cmd.add_option("--decision-db", path,
                 "SQLite file keeping the decision history (GET /decisions, topofit explain); in memory when absent")
      ->option_text("PATH");
  AddDecisionDbMaxBytesFlag(cmd, max_bytes);
}

void AddDecisionDbMaxBytesFlag(CLI::App& cmd, int64_t& max_bytes) {
  cmd.add_option("--decision-db-max-bytes", max_bytes,
                 "bytes the decision history may take, its WAL included: past half of it the oldest records are "
                 "evicted (default 512MiB, at least 32MiB; bytes or a unit: 2GiB)")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(history::kMinMaxBytes, std::numeric_limits<int64_t>::max()))
      ->capture_default_str()
      ->option_text("BYTES");
}

DecisionHistory OpenDecisionHistory(const std::string& path, int64_t max_bytes, server::MetricsRegistry& registry,
                                    spdlog::logger& log) {
  server::Counter& written = registry.AddCounter("topofit_decisions_written_total", "Decision records written");
  server::Counter& dropped = registry.AddCounter(
      "topofit_decisions_dropped_total", "Decision records dropped: the writer's queue was full or a write failed");
  server::Counter& evicted = registry.AddCounter("topofit_decisions_evicted_total",
                                                 "Decision records evicted by retention, by age, row count or bytes",
                                                 {"by"});
  server::Gauge& bytes = registry.AddGauge(
      "topofit_decision_db_bytes", "The decision database's bytes on disk, its WAL included (in memory: its pages)");
  server::Counter& errors = registry.AddCounter(
      "topofit_decision_db_errors_total", "Decision database errors: opening it, or a write it refused");
  DecisionHistory out;
  history::Retention retention;
  retention.max_bytes = max_bytes;
  absl::StatusOr<std::unique_ptr<history::DecisionStore>> store = history::DecisionStore::Open(path, retention);
  if (!store.ok()) {
    errors.Inc();
    out.unavailable = std::string(store.status().message());
    server::LogEvent(log, "decision_db", {{"error", out.unavailable}, {"history", "off"}}, spdlog::level::err);
    return out;
  }
  out.store = *std::move(store);
  out.recorder = std::make_unique<history::AsyncRecorder>(
      *out.store, history::RecorderOptions{},
      history::RecorderHooks{
          .on_written = [&written](int64_t n) { written.Inc({}, static_cast<double>(n)); },
          .on_dropped = [&dropped](int64_t n) { dropped.Inc({}, static_cast<double>(n)); },
          .on_evicted =
              [&evicted](const history::Evictions& e) {
                evicted.Inc({"age"}, static_cast<double>(e.by_age));
                evicted.Inc({"rows"}, static_cast<double>(e.by_rows));
                evicted.Inc({"bytes"}, static_cast<double>(e.by_bytes));
              },
          .on_write_failed =
              [&errors, &log](const absl::Status& status) {
                errors.Inc();
                server::LogEvent(log, "decision_db", {{"error", std::string(status.message())}}, spdlog::level::warn);
              },
          .on_bytes = [&bytes](int64_t n) { bytes.Set(static_cast<double>(n)); }});
  if (absl::StatusOr<int64_t> opened = out.store->Bytes(); opened.ok()) bytes.Set(static_cast<double>(*opened));
  server::LogEvent(log, "decision_db", {{"path", path.empty() ? ":memory:" : path},
                                        {"schema", out.store->schema_version()},
                                        {"max_bytes", max_bytes}});
  return out;
}

}  // namespace topofit::cli
