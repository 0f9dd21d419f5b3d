#pragma once

// Every ResourceClaim a claim watch has delivered, allocated or not, by namespace and name: what a pod's
// spec.resourceClaims and status.resourceClaimStatuses name, read when its demand is judged
// (decision/claim_pod_demand.h). The extender keeps one inside its GPU state (GpuStateSync); the expander
// keeps one of its own (`topofit expander --dra`). Thread-safe.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "decision/claim_pod_demand.h"
#include "kube/dra_objects.h"
#include "kubeclient/list_watcher.h"

namespace topofit::kubeclient {

class ClaimCache {
 public:
  // For ListWatcher::ForResourceClaims.
  WatchHandler<kube::ResourceClaim> Handler();
  // A LIST: the claims it holds are all there are.
  void Sync(const std::vector<kube::ResourceClaim>& claims);
  // A deletion removes the claim only if it is the one kept (same uid): a claim deleted and made again
  // under its name may arrive before the old one's DELETED.
  void Changed(WatchEventType type, const kube::ResourceClaim& claim);

  std::optional<kube::ResourceClaim> Find(absl::string_view namespace_name, absl::string_view name) const;
  size_t size() const;
  // The claims as decisions read them, with `classes` saying which requests ask for GPUs. The cache must
  // outlive what it returns.
  decision::ClaimSource Source(decision::DraGpuClasses classes) const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, kube::ResourceClaim, std::less<>> claims_ ABSL_GUARDED_BY(mu_);  // by "namespace/name"
};

}  // namespace topofit::kubeclient
