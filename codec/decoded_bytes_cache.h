#pragma once

// Objects decoded from their protobuf bytes, kept from one BestOptions call to the next. cluster-autoscaler
// sends the same pending pods and the same node-group templates in every loop (every 10 s by default), and
// decoding them was most of a call's allocations (pods) and a quarter of its time at 500 groups (templates:
// every quantity of every resource list parsed again). Keyed by bytes: a pod by its own (one that changed
// has a new resourceVersion), a template by its key (codec/template_key.h: the bytes of what the decoder
// reads, without the name CA makes anew per loop), so an entry never goes stale; only what decoded is kept.
//
// Bounded by two generations: an object used in the current generation or the one before stays. When the
// current generation's keys reach half of `max_bytes`, it becomes the previous one and the older one is
// dropped, so at most `max_bytes` of keys are held (with the objects they decoded to, about as much again);
// objects still being sent are found in the previous generation and carried into the new one. Thread-safe.

#include <cstddef>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "kube/objects.h"

namespace topofit::codec {

template <typename Decoded>
class DecodedBytesCache {
 public:
  static constexpr size_t kDefaultMaxBytes = size_t{16} << 20;

  explicit DecodedBytesCache(size_t max_bytes = kDefaultMaxBytes) : max_bytes_(max_bytes) {}
  DecodedBytesCache(const DecodedBytesCache&) = delete;
  DecodedBytesCache& operator=(const DecodedBytesCache&) = delete;

  // The object these bytes decoded to, or nullptr.
  std::shared_ptr<const Decoded> Find(absl::string_view bytes) {
    absl::MutexLock lock(&mu_);
    if (auto it = current_.find(bytes); it != current_.end()) return it->second;
    auto old = previous_.find(bytes);
    if (old == previous_.end()) return nullptr;
    std::shared_ptr<const Decoded> decoded = std::move(old->second);
    previous_.erase(old);
    InsertLocked(bytes, decoded);  // still sent: carried into the current generation
    return decoded;
  }

  void Insert(absl::string_view bytes, std::shared_ptr<const Decoded> decoded) {
    if (decoded == nullptr) return;
    absl::MutexLock lock(&mu_);
    InsertLocked(bytes, std::move(decoded));
  }

  // Entries held now, in both generations.
  size_t size() const {
    absl::MutexLock lock(&mu_);
    return current_.size() + previous_.size();
  }

 private:
  using Generation = absl::flat_hash_map<std::string, std::shared_ptr<const Decoded>>;

  void InsertLocked(absl::string_view bytes, std::shared_ptr<const Decoded> decoded) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (bytes.size() > max_bytes_ / 2) return;  // would fill a generation alone
    if (current_bytes_ + bytes.size() > max_bytes_ / 2) {
      previous_ = std::move(current_);
      current_ = Generation();
      current_bytes_ = 0;
    }
    if (current_.try_emplace(bytes, std::move(decoded)).second) current_bytes_ += bytes.size();
  }

  const size_t max_bytes_;
  mutable absl::Mutex mu_;
  Generation current_ ABSL_GUARDED_BY(mu_);
  Generation previous_ ABSL_GUARDED_BY(mu_);
  size_t current_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

using PodBytesCache = DecodedBytesCache<kube::Pod>;
// Node-group templates (nodeBytesMap, nodeMap), by their TemplateKeyOf.
using NodeBytesCache = DecodedBytesCache<kube::Node>;

}  // namespace topofit::codec
