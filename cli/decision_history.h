#pragma once

// --decision-db and --decision-db-max-bytes, the same on `topofit extender`, `expander` and `serve` (and
// the agent's): the process's decision history.

#include <cstdint>
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

// --decision-db and --decision-db-max-bytes.
void AddDecisionDbFlag(CLI::App& cmd, std::string& path, int64_t& max_bytes);
// --decision-db-max-bytes alone (the agent words its --decision-db its own way): bytes, or with a unit
// (512MiB, 1GiB; KB and KiB are both 1024), at least history::kMinMaxBytes.
void AddDecisionDbMaxBytesFlag(CLI::App& cmd, int64_t& max_bytes);

// Opens the history at `path` (in memory when empty), at most `max_bytes` (history::Retention), with its
// metrics on `registry`:
//   topofit_decisions_written_total, topofit_decisions_dropped_total (queue full or a failed write),
//   topofit_decisions_evicted_total{by: age|rows|bytes}, topofit_decision_db_bytes (the file and its WAL,
//   after each batch), topofit_decision_db_errors_total.
// A corrupt, locked or newer file is logged and counted, and the history left unavailable: never fatal.
DecisionHistory OpenDecisionHistory(const std::string& path, int64_t max_bytes, server::MetricsRegistry& registry,
                                    spdlog::logger& log);

}  // namespace topofit::cli
