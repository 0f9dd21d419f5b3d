#include "kubeclient/pending_pod_cache.h"

#include "absl/strings/str_cat.h"

namespace topofit::kubeclient {
namespace {

std::string KeyOf(absl::string_view namespace_name, absl::string_view name) {
  return absl::StrCat(namespace_name, "/", name);
}

// A pod the selector should have kept out (a bound one) is never offered to a bind as pending.
bool IsPending(const kube::Pod& pod) { return pod.spec.node_name.empty(); }

}  // namespace

std::string PendingPodsSelector(absl::string_view scheduler_name) {
  return absl::StrCat("spec.schedulerName=", scheduler_name, ",spec.nodeName=");
}

WatchHandler<kube::Pod> PendingPodCache::Handler() {
  return WatchHandlerOf(*this, &PendingPodCache::Sync, &PendingPodCache::Changed);
}

void PendingPodCache::Sync(const std::vector<kube::Pod>& pods) {
  absl::flat_hash_map<std::string, std::shared_ptr<const kube::Pod>> listed;
  for (const kube::Pod& pod : pods) {
    if (IsPending(pod)) listed[KeyOf(pod.metadata.namespace_name, pod.metadata.name)] = std::make_shared<const kube::Pod>(pod);
  }
  absl::MutexLock lock(&mu_);
  pods_.swap(listed);
}

void PendingPodCache::Changed(WatchEventType type, const kube::Pod& pod) {
  std::string key = KeyOf(pod.metadata.namespace_name, pod.metadata.name);
  std::shared_ptr<const kube::Pod> kept =
      type != WatchEventType::kDeleted && IsPending(pod) ? std::make_shared<const kube::Pod>(pod) : nullptr;
  absl::MutexLock lock(&mu_);
  if (kept == nullptr) {
    pods_.erase(key);
  } else {
    pods_[std::move(key)] = std::move(kept);
  }
}

std::shared_ptr<const kube::Pod> PendingPodCache::Find(absl::string_view namespace_name, absl::string_view name) const {
  const std::string key = KeyOf(namespace_name, name);
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : it->second;
}

size_t PendingPodCache::size() const {
  absl::MutexLock lock(&mu_);
  return pods_.size();
}

}  // namespace topofit::kubeclient
