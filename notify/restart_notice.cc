#include "notify/restart_notice.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace topofit::notify {

std::string_view NoticeVerdictName(NoticeVerdict verdict) {
  switch (verdict) {
    case NoticeVerdict::kSend: return "send";
    case NoticeVerdict::kOutOfScope: return "out-of-scope";
    case NoticeVerdict::kMuted: return "muted";
    case NoticeVerdict::kPastMaxRestarts: return "past-max-restarts";
    case NoticeVerdict::kExitedZero: return "exited-zero";
    case NoticeVerdict::kNotARestart: return "not-a-restart";
  }
  return "unknown";
}

RestartNoticeGate::RestartNoticeGate(RestartNoticeOptions options) : options_(std::move(options)) {}

NoticeVerdict RestartNoticeGate::Admit(const kube::ObjectMeta& pod, const history::Record& record, absl::Time now) {
  if (!record.restart) return NoticeVerdict::kNotARestart;
  if (!options_.scope.Covers(pod.namespace_name, pod.name)) return NoticeVerdict::kOutOfScope;
  const history::RestartDetail& restart = *record.restart;
  if (restart.restart_count > options_.max_restarts) return NoticeVerdict::kPastMaxRestarts;
  // Exit code 0 with a termination reason: the container ended cleanly (a Job-like container restarted by
  // its pod's policy). No termination at all is not an exit code 0.
  if (options_.ignore_exit_zero && restart.exit_code == 0 && restart.signal == 0 &&
      !restart.termination_reason.empty()) {
    return NoticeVerdict::kExitedZero;
  }
  const std::string key = absl::StrCat(pod.namespace_name, "/", pod.name);
  if (auto it = muted_until_.find(key); it != muted_until_.end() && now < it->second) return NoticeVerdict::kMuted;
  if (muted_until_.size() >= options_.max_muted_pods) Forget(now);
  muted_until_[key] = now + options_.mute;
  return NoticeVerdict::kSend;
}

// Drops the expired windows; when every window is still running, the half that ends soonest.
void RestartNoticeGate::Forget(absl::Time now) {
  std::erase_if(muted_until_, [now](const auto& entry) { return entry.second <= now; });
  if (muted_until_.size() < options_.max_muted_pods) return;
  std::vector<absl::Time> ends;
  ends.reserve(muted_until_.size());
  for (const auto& [key, until] : muted_until_) ends.push_back(until);
  const auto middle = ends.begin() + static_cast<std::ptrdiff_t>(ends.size() / 2);
  std::nth_element(ends.begin(), middle, ends.end());
  const absl::Time cut = *middle;
  std::erase_if(muted_until_, [cut](const auto& entry) { return entry.second <= cut; });
}

std::string RestartNoticeGate::ChannelOf(const kube::ObjectMeta& pod) const {
  if (options_.channel_key.empty()) return "";
  if (auto it = pod.labels.find(options_.channel_key); it != pod.labels.end()) return it->second;
  if (auto it = pod.annotations.find(options_.channel_key); it != pod.annotations.end()) return it->second;
  return "";
}

}  // namespace topofit::notify
