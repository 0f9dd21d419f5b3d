#include "codec/pod_bytes_cache.h"

#include <utility>

namespace topofit::codec {

std::shared_ptr<const kube::Pod> PodBytesCache::Find(absl::string_view bytes) {
  absl::MutexLock lock(&mu_);
  if (auto it = current_.find(bytes); it != current_.end()) return it->second;
  auto old = previous_.find(bytes);
  if (old == previous_.end()) return nullptr;
  std::shared_ptr<const kube::Pod> pod = std::move(old->second);
  previous_.erase(old);
  InsertLocked(bytes, pod);  // still sent: carried into the current generation
  return pod;
}

void PodBytesCache::Insert(absl::string_view bytes, std::shared_ptr<const kube::Pod> pod) {
  if (pod == nullptr) return;
  absl::MutexLock lock(&mu_);
  InsertLocked(bytes, std::move(pod));
}

void PodBytesCache::InsertLocked(absl::string_view bytes, std::shared_ptr<const kube::Pod> pod) {
  if (bytes.size() > max_bytes_ / 2) return;  // would fill a generation alone
  if (current_bytes_ + bytes.size() > max_bytes_ / 2) {
    previous_ = std::move(current_);
    current_ = Generation();
    current_bytes_ = 0;
  }
  if (current_.try_emplace(bytes, std::move(pod)).second) current_bytes_ += bytes.size();
}

size_t PodBytesCache::size() const {
  absl::MutexLock lock(&mu_);
  return current_.size() + previous_.size();
}

}  // namespace topofit::codec
