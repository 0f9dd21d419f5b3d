#pragma once

// Logs the condition of something retried in a loop (a watch, the leader election, the API client) once
// per change rather than on every attempt: a loop that fails every few seconds for an hour writes a handful
// of lines, and an operator still sees at once that it started failing, why, and when it recovered.
//
//   first failure, or a failure for another reason    warn  <event>_failing   reason, retry_in_seconds, detail
//   the same failure still going on                   warn  <event>_failing   + failed_attempts, failing_seconds;
//                                                             after 30 s, then 1, 2, 4 ... min, at most every 10 min
//   a success after failures                          info  <event>_recovered failed_attempts, failing_seconds
//
// Thread-safe. The clock is injected.

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/clock.h"
#include "server/logging.h"
#include "spdlog/logger.h"

namespace topofit::server {

class ConditionLog {
 public:
  // `subject` names what is retried in every line (e.g. {{"resource", "nodes"}}). `log` and `clock` must
  // outlive this object.
  ConditionLog(spdlog::logger& log, const Clock& clock, std::string event, LogFields subject);

  // An attempt failed for `reason` (compared with the last one: keep it free of what changes between
  // attempts, such as a pod name); `detail`, logged but not compared, says more. The next attempt comes in
  // `retry_in` (zero when unknown).
  void Failed(absl::string_view reason, absl::Duration retry_in = absl::ZeroDuration(), absl::string_view detail = "");
  // An attempt succeeded.
  void Succeeded();

  bool failing() const;

  // The first reminder of a failure that goes on, and the most time between two.
  static constexpr absl::Duration kFirstReminder = absl::Seconds(30);
  static constexpr absl::Duration kMaxReminder = absl::Minutes(10);

 private:
  spdlog::logger& log_;
  const Clock& clock_;
  const std::string event_;
  const LogFields subject_;

  mutable absl::Mutex mu_;
  std::string reason_ ABSL_GUARDED_BY(mu_);  // empty: not failing
  int64_t failed_attempts_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time failing_since_ ABSL_GUARDED_BY(mu_);
  absl::Time next_reminder_ ABSL_GUARDED_BY(mu_);
  absl::Duration reminder_step_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topofit::server
