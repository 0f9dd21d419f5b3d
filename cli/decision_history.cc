#include "cli/decision_history.h"

#include "server/logging.h"

namespace topofit::cli {

void AddDecisionDbFlag(CLI::App& cmd, std::string& path) {
  cmd.add_option("--decision-db", path,
                 "SQLite file keeping the decision history (GET /decisions, topofit explain); in memory when absent")
      ->option_text("PATH");
}

DecisionHistory OpenDecisionHistory(const std::string& path, server::MetricsRegistry& registry, spdlog::logger& log) {
  server::Counter& written = registry.AddCounter("topofit_decisions_written_total", "Decision records written");
  server::Counter& dropped = registry.AddCounter(
      "topofit_decisions_dropped_total", "Decision records dropped: the writer's queue was full or a write failed");
  server::Counter& evicted = registry.AddCounter("topofit_decisions_evicted_total",
                                                 "Decision records evicted by retention, by age or row count", {"by"});
  server::Counter& errors = registry.AddCounter(
      "topofit_decision_db_errors_total", "Decision database errors: opening it, or a write it refused");
  DecisionHistory out;
  absl::StatusOr<std::unique_ptr<history::DecisionStore>> store = history::DecisionStore::Open(path);
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
              },
          .on_write_failed =
              [&errors, &log](const absl::Status& status) {
                errors.Inc();
                server::LogEvent(log, "decision_db", {{"error", std::string(status.message())}}, spdlog::level::warn);
              }});
  server::LogEvent(log, "decision_db", {{"path", path.empty() ? ":memory:" : path},
                                        {"schema", out.store->schema_version()}});
  return out;
}

}  // namespace topofit::cli
