#pragma once

// Every ResourceClaim a claim watch has delivered, allocated or not, by namespace and name: what a pod's
// spec.resourceClaims and status.resourceClaimStatuses name, read when its demand is judged
// (decision/claim_pod_demand.h). The extender keeps one inside its GPU state (GpuStateSync); the expander
// keeps one of its own (`topofit expander --dra`). Thread-safe.

#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "decision/claim_pod_demand.h"
#include "kube/dra_objects.h"
#include "kubeclient/keyed_object_cache.h"
#include "kubeclient/list_watcher.h"

namespace topofit::kubeclient {

class ClaimCache {
 public:
  ClaimCache();
  // For ListWatcher::ForResourceClaims.
  WatchHandler<kube::ResourceClaim> Handler() { return claims_.Handler(); }
  void Sync(const std::vector<kube::ResourceClaim>& claims) { claims_.Sync(claims); }
  void Changed(WatchEventType type, const kube::ResourceClaim& claim) { claims_.Changed(type, claim); }

  std::optional<kube::ResourceClaim> Find(absl::string_view namespace_name, absl::string_view name) const;
  size_t size() const { return claims_.size(); }
  // The claims as decisions read them, with `classes` saying which requests ask for GPUs. The cache must
  // outlive what it returns.
  decision::ClaimSource Source(decision::DraGpuClasses classes) const;

 private:
  KeyedObjectCache<kube::ResourceClaim> claims_;  // by "namespace/name"
};

}  // namespace topofit::kubeclient
