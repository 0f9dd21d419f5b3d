#include "kubeclient/claim_cache.h"

#include "absl/strings/str_cat.h"

namespace topofit::kubeclient {
namespace {

std::string KeyOf(absl::string_view namespace_name, absl::string_view name) {
  return absl::StrCat(namespace_name, "/", name);
}

}  // namespace

WatchHandler<kube::ResourceClaim> ClaimCache::Handler() {
  return WatchHandlerOf(*this, &ClaimCache::Sync, &ClaimCache::Changed);
}

void ClaimCache::Sync(const std::vector<kube::ResourceClaim>& claims) {
  std::map<std::string, kube::ResourceClaim, std::less<>> listed;
  for (const kube::ResourceClaim& claim : claims) {
    listed.insert_or_assign(KeyOf(claim.metadata.namespace_name, claim.metadata.name), claim);
  }
  absl::MutexLock lock(&mu_);
  claims_.swap(listed);
}

void ClaimCache::Changed(WatchEventType type, const kube::ResourceClaim& claim) {
  std::string key = KeyOf(claim.metadata.namespace_name, claim.metadata.name);
  absl::MutexLock lock(&mu_);
  if (type != WatchEventType::kDeleted) {
    claims_.insert_or_assign(std::move(key), claim);
  } else if (auto it = claims_.find(key); it != claims_.end() && it->second.metadata.uid == claim.metadata.uid) {
    claims_.erase(it);
  }
}

std::optional<kube::ResourceClaim> ClaimCache::Find(absl::string_view namespace_name, absl::string_view name) const {
  const std::string key = KeyOf(namespace_name, name);
  absl::MutexLock lock(&mu_);
  auto it = claims_.find(key);
  if (it == claims_.end()) return std::nullopt;
  return it->second;
}

size_t ClaimCache::size() const {
  absl::MutexLock lock(&mu_);
  return claims_.size();
}

decision::ClaimSource ClaimCache::Source(decision::DraGpuClasses classes) const {
  return decision::ClaimSource{
      .claim = [this](absl::string_view namespace_name, absl::string_view name) { return Find(namespace_name, name); },
      .classes = std::move(classes)};
}

}  // namespace topofit::kubeclient
