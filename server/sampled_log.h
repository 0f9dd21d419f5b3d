#pragma once

// Logs an event that can come many times a second — a ledger at its cap evicts an entry for every new
// one — as its first occurrence at once, then at most one line per interval, each saying how many
// occurrences it stands for (`occurrences`, since the line before) and showing the latest one's fields.
// The counter metric beside it keeps the exact total; the log keeps the operator's attention without
// flooding it. Occurrences after the last line are reported with the next one.
//
// Thread-safe. The clock is injected.

#include <cstdint>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/clock.h"
#include "server/logging.h"
#include "spdlog/logger.h"

namespace topofit::server {

class SampledLog {
 public:
  // `log` and `clock` must outlive this object.
  SampledLog(spdlog::logger& log, const Clock& clock, std::string event, spdlog::level::level_enum level,
             absl::Duration interval = kDefaultInterval);

  // One occurrence, described by `fields`.
  void Occurred(LogFields fields);

  static constexpr absl::Duration kDefaultInterval = absl::Minutes(1);

 private:
  spdlog::logger& log_;
  const Clock& clock_;
  const std::string event_;
  const spdlog::level::level_enum level_;
  const absl::Duration interval_;

  absl::Mutex mu_;
  int64_t unlogged_ ABSL_GUARDED_BY(mu_) = 0;  // occurrences since the last line
  absl::Time next_line_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace topofit::server
