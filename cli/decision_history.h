#pragma once

// --decision-db, the same on `topofit extender`, `expander` and `serve`: the process's decision history.

#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/logger.h>

#include "history/recorder.h"
#include "history/store.h"
#include "server/metrics.h"

namespace topofit::cli {

// The store and the writer the front ends record to. Null when the database could not be opened: the
// process decides without history, and `unavailable` says why (GET /decisions answers 503 with it).
struct DecisionHistory {
  std::unique_ptr<history::DecisionStore> store;
  std::unique_ptr<history::AsyncRecorder> recorder;  // after the store it writes to: destroyed first
  std::string unavailable;
};

void AddDecisionDbFlag(CLI::App& cmd, std::string& path);

// Opens the history at `path` (in memory when empty) with its metrics on `registry`:
//   topofit_decisions_written_total, topofit_decisions_dropped_total (queue full or a failed write),
//   topofit_decisions_evicted_total{by: age|rows}, topofit_decision_db_errors_total.
// A corrupt, locked or newer file is logged and counted, and the history left unavailable: never fatal.
DecisionHistory OpenDecisionHistory(const std::string& path, server::MetricsRegistry& registry, spdlog::logger& log);

}  // namespace topofit::cli
