#pragma once

// Every ComputeDomain (kube/compute_domain.h) a watch has delivered, by namespace and channel template: what
// a pod's spec.resourceClaims names when it joins one (decision/compute_domain.h). Thread-safe.

#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "kube/compute_domain.h"
#include "kubeclient/keyed_object_cache.h"
#include "kubeclient/list_watcher.h"

namespace topofit::kubeclient {

class ComputeDomainCache {
 public:
  ComputeDomainCache();
  // For ListWatcher::ForComputeDomains.
  WatchHandler<kube::ComputeDomain> Handler() { return domains_.Handler(); }
  void Sync(const std::vector<kube::ComputeDomain>& domains) { domains_.Sync(domains); }
  void Changed(WatchEventType type, const kube::ComputeDomain& domain) { domains_.Changed(type, domain); }

  // The domain whose channel claim template is `channel_template` in that namespace.
  std::optional<kube::ComputeDomain> ByChannelTemplate(absl::string_view namespace_name,
                                                       absl::string_view channel_template) const;
  size_t size() const { return domains_.size(); }

 private:
  KeyedObjectCache<kube::ComputeDomain> domains_;  // by "namespace/channel template"
};

}  // namespace topofit::kubeclient
