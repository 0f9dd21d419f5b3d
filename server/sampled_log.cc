#include "server/sampled_log.h"

#include <utility>

namespace topofit::server {

SampledLog::SampledLog(spdlog::logger& log, const Clock& clock, std::string event, spdlog::level::level_enum level,
                       absl::Duration interval)
    : log_(log), clock_(clock), event_(std::move(event)), level_(level), interval_(interval) {}

void SampledLog::Occurred(LogFields fields) {
  const absl::Time now = clock_.Now();
  int64_t occurrences;
  {
    absl::MutexLock lock(&mu_);
    ++unlogged_;
    if (now < next_line_) return;
    occurrences = unlogged_;
    unlogged_ = 0;
    next_line_ = now + interval_;
  }
  fields.emplace_back("occurrences", occurrences);
  LogEvent(log_, event_, fields, level_);
}

}  // namespace topofit::server
