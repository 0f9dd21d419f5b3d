#include "server/condition_log.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace topofit::server {

ConditionLog::ConditionLog(spdlog::logger& log, const Clock& clock, std::string event, LogFields subject)
    : log_(log), clock_(clock), event_(std::move(event)), subject_(std::move(subject)) {}

void ConditionLog::Failed(absl::string_view reason, absl::Duration retry_in, absl::string_view detail) {
  const absl::Time now = clock_.Now();
  LogFields fields = subject_;
  {
    absl::MutexLock lock(&mu_);
    const std::string why = reason.empty() ? std::string("unknown") : std::string(reason);
    if (why == reason_) {
      ++failed_attempts_;
      if (now < next_reminder_) return;
      fields.emplace_back("failed_attempts", failed_attempts_);
      fields.emplace_back("failing_seconds", absl::ToInt64Seconds(now - failing_since_));
      reminder_step_ = std::min(reminder_step_ * 2, kMaxReminder);
    } else {
      if (reason_.empty()) {
        failing_since_ = now;
        failed_attempts_ = 0;
      }
      ++failed_attempts_;
      reason_ = why;
      reminder_step_ = kFirstReminder;
    }
    next_reminder_ = now + reminder_step_;
  }
  fields.emplace_back("reason", std::string(reason));
  fields.emplace_back("retry_in_seconds", absl::ToDoubleSeconds(retry_in));
  if (!detail.empty()) fields.emplace_back("detail", detail);
  LogEvent(log_, absl::StrCat(event_, "_failing"), fields, spdlog::level::warn);
}

void ConditionLog::Succeeded() {
  LogFields fields = subject_;
  {
    absl::MutexLock lock(&mu_);
    if (reason_.empty()) return;
    fields.emplace_back("failed_attempts", failed_attempts_);
    fields.emplace_back("failing_seconds", absl::ToInt64Seconds(clock_.Now() - failing_since_));
    reason_.clear();
    failed_attempts_ = 0;
  }
  LogEvent(log_, absl::StrCat(event_, "_recovered"), fields);
}

bool ConditionLog::failing() const {
  absl::MutexLock lock(&mu_);
  return !reason_.empty();
}

}  // namespace topofit::server
