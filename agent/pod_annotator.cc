#include "agent/pod_annotator.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/logging.h"

namespace topofit::agent {

PodAnnotator::PodAnnotator(kubeclient::KubeApi& kube, spdlog::logger& log)
    : kube_(kube), log_(log), queue_([this](const std::string& key) { return Write(key); }, {}) {}

void PodAnnotator::Set(const std::string& namespace_name, const std::string& name, const std::string& key,
                       const std::string& value) {
  const std::string pod_key = absl::StrCat(namespace_name, "/", name);
  {
    absl::MutexLock lock(&mu_);
    pending_[pod_key][key] = value;
  }
  queue_.Add(pod_key);
}

kubeclient::CoalescingQueue::Outcome PodAnnotator::Write(const std::string& pod_key) {
  kube::StringMap annotations;
  {
    absl::MutexLock lock(&mu_);
    const auto it = pending_.find(pod_key);
    if (it == pending_.end()) return kubeclient::CoalescingQueue::Outcome::kDone;
    annotations = std::move(it->second);
    pending_.erase(it);
  }
  const std::pair<std::string, std::string> pod = absl::StrSplit(pod_key, absl::MaxSplits('/', 1));
  absl::StatusOr<std::string> written = kube_.MergePodAnnotations(pod.first, pod.second, annotations);
  if (written.ok() || absl::IsNotFound(written.status())) {
    if (!written.ok()) server::LogEvent(log_, "annotate_pod", {{"pod", pod_key}, {"result", "pod gone"}});
    return kubeclient::CoalescingQueue::Outcome::kDone;
  }
  server::LogEvent(log_, "annotate_pod", {{"pod", pod_key}, {"error", std::string(written.status().message())}},
                   spdlog::level::warn);
  absl::MutexLock lock(&mu_);
  kube::StringMap& pending = pending_[pod_key];
  for (auto& [key, value] : annotations) pending.try_emplace(key, std::move(value));  // newer values win
  return kubeclient::CoalescingQueue::Outcome::kRetry;
}

}  // namespace topofit::agent
