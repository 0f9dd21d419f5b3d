#include "kubeclient/compute_domain_cache.h"

#include "absl/strings/str_cat.h"

namespace topofit::kubeclient {

ComputeDomainCache::ComputeDomainCache()
    : domains_([](const kube::ComputeDomain& domain) {
        return absl::StrCat(domain.metadata.namespace_name, "/", domain.channel_template);
      }) {}

std::optional<kube::ComputeDomain> ComputeDomainCache::ByChannelTemplate(absl::string_view namespace_name,
                                                                         absl::string_view channel_template) const {
  return domains_.Find(absl::StrCat(namespace_name, "/", channel_template));
}

}  // namespace topofit::kubeclient
