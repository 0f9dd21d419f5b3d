#pragma once

// Pods decoded from their protobuf bytes, kept from one BestOptions call to the next. cluster-autoscaler sends
// the same pending pods in every loop (every 10 s by default) for as long as they stay pending, and decoding
// them is most of a call's allocations. Keyed by the bytes themselves: a pod that changed has a new
// resourceVersion, hence new bytes, so an entry never goes stale; only bytes that decoded are kept.
//
// Bounded by two generations: a pod used in the current generation or the one before stays. When the current
// generation's keys reach half of `max_bytes`, it becomes the previous one and the older one is dropped, so
// at most `max_bytes` of keys are held (with the pods they decoded to, about as much again); pods still being
// sent are found in the previous generation and carried into the new one. Thread-safe.

#include <cstddef>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "kube/objects.h"

namespace topofit::codec {

class PodBytesCache {
 public:
  static constexpr size_t kDefaultMaxBytes = size_t{16} << 20;

  explicit PodBytesCache(size_t max_bytes = kDefaultMaxBytes) : max_bytes_(max_bytes) {}
  PodBytesCache(const PodBytesCache&) = delete;
  PodBytesCache& operator=(const PodBytesCache&) = delete;

  // The pod these bytes decoded to, or nullptr.
  std::shared_ptr<const kube::Pod> Find(absl::string_view bytes);
  void Insert(absl::string_view bytes, std::shared_ptr<const kube::Pod> pod);

  // Entries held now, in both generations.
  size_t size() const;

 private:
  using Generation = absl::flat_hash_map<std::string, std::shared_ptr<const kube::Pod>>;
  void InsertLocked(absl::string_view bytes, std::shared_ptr<const kube::Pod> pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const size_t max_bytes_;
  mutable absl::Mutex mu_;
  Generation current_ ABSL_GUARDED_BY(mu_);
  Generation previous_ ABSL_GUARDED_BY(mu_);
  size_t current_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace topofit::codec
