#include "kubeclient/claim_cache.h"

#include "absl/strings/str_cat.h"

namespace topofit::kubeclient {

ClaimCache::ClaimCache()
    : claims_([](const kube::ResourceClaim& claim) {
        return absl::StrCat(claim.metadata.namespace_name, "/", claim.metadata.name);
      }) {}

std::optional<kube::ResourceClaim> ClaimCache::Find(absl::string_view namespace_name, absl::string_view name) const {
  return claims_.Find(absl::StrCat(namespace_name, "/", name));
}

decision::ClaimSource ClaimCache::Source(decision::DraGpuClasses classes) const {
  return decision::ClaimSource{
      .claim = [this](absl::string_view namespace_name, absl::string_view name) { return Find(namespace_name, name); },
      .classes = std::move(classes)};
}

}  // namespace topofit::kubeclient
