#pragma once

// The objects a list+watch delivers (list_watcher.h), each under a key its caller derives from it (a
// claim's namespace and name, a ComputeDomain's namespace and channel template). Thread-safe.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "kubeclient/list_watcher.h"

namespace topofit::kubeclient {

template <typename T>
class KeyedObjectCache {
 public:
  using KeyOf = std::string (*)(const T&);
  explicit KeyedObjectCache(KeyOf key_of) : key_of_(key_of) {}

  WatchHandler<T> Handler() { return WatchHandlerOf(*this, &KeyedObjectCache::Sync, &KeyedObjectCache::Changed); }
  // A LIST: the objects it holds are all there are.
  void Sync(const std::vector<T>& objects) {
    std::map<std::string, T, std::less<>> listed;
    for (const T& object : objects) listed.insert_or_assign(key_of_(object), object);
    absl::MutexLock lock(&mu_);
    objects_.swap(listed);
  }
  // A deletion removes the object only if it is the one kept (same uid): an object deleted and made again
  // under its key may arrive before the old one's DELETED.
  void Changed(WatchEventType type, const T& object) {
    std::string key = key_of_(object);
    absl::MutexLock lock(&mu_);
    if (type != WatchEventType::kDeleted) {
      objects_.insert_or_assign(std::move(key), object);
    } else if (auto it = objects_.find(key); it != objects_.end() && it->second.metadata.uid == object.metadata.uid) {
      objects_.erase(it);
    }
  }

  std::optional<T> Find(absl::string_view key) const {
    absl::MutexLock lock(&mu_);
    auto it = objects_.find(key);
    if (it == objects_.end()) return std::nullopt;
    return it->second;
  }
  size_t size() const {
    absl::MutexLock lock(&mu_);
    return objects_.size();
  }

 private:
  const KeyOf key_of_;
  mutable absl::Mutex mu_;
  std::map<std::string, T, std::less<>> objects_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topofit::kubeclient
