#pragma once

// ResourceClaims and the pods that name them, for the tests of decisions about claim pods.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "decision/claim_demand.h"
#include "decision/claim_pod_demand.h"
#include "kube/dra_objects.h"
#include "tests/kube/builders.h"

namespace topofit::decision::testing {

// A claim in namespace ml whose requests ask `count` devices of `device_class` each.
inline kube::ResourceClaim Claim(const std::string& name, std::vector<kube::DeviceRequest> requests,
                          std::vector<kube::DeviceConstraint> constraints = {}) {
  kube::ResourceClaim claim;
  claim.metadata.name = name;
  claim.metadata.namespace_name = "ml";
  claim.requests = std::move(requests);
  claim.constraints = std::move(constraints);
  return claim;
}

inline kube::DeviceRequest Gpus(const std::string& name, int64_t count, std::vector<std::string> selectors = {}) {
  return kube::DeviceRequest{.name = name, .device_class_name = "gpu.nvidia.com", .allocation_mode = "ExactCount",
                             .count = count, .selectors = std::move(selectors), .admin_access = false,
                             .first_available = false, .other_selector = false};
}

inline kube::DeviceConstraint MatchAttribute(const std::string& attribute, std::vector<std::string> requests = {}) {
  return kube::DeviceConstraint{.requests = std::move(requests), .match_attribute = attribute, .other = false};
}

// The claims of the API server, and a pod of namespace ml naming them.
struct Claims {
  std::map<std::string, kube::ResourceClaim> by_name;
  Claims& Add(kube::ResourceClaim claim) {
    by_name[claim.metadata.name] = std::move(claim);
    return *this;
  }
  std::optional<kube::ResourceClaim> Find(absl::string_view ns, absl::string_view name) const {
    auto it = by_name.find(std::string(name));
    if (ns != "ml" || it == by_name.end()) return std::nullopt;
    return it->second;
  }
  // As the extender's and the expander's claim watches hand them out.
  ClaimSource Source() const {
    return ClaimSource{.claim = [this](absl::string_view ns, absl::string_view name) { return Find(ns, name); },
                       .classes = {}};
  }
  absl::StatusOr<std::optional<ClaimGpuDemand>> DemandOf(const kube::Pod& pod) const {
    return ClaimGpuDemandOf(pod, [this](absl::string_view ns, absl::string_view name) { return Find(ns, name); });
  }
};

inline kube::Pod PodNaming(std::vector<kube::PodResourceClaim> entries, std::vector<kube::PodResourceClaimStatus> statuses = {}) {
  kube::Pod pod = kube::testing::MakePod().name("trainer-0").namespaceName("ml");
  pod.spec.resource_claims = std::move(entries);
  pod.status.resource_claim_statuses = std::move(statuses);
  return pod;
}

inline kube::PodResourceClaim Named(const std::string& entry, const std::string& claim) {
  return kube::PodResourceClaim{.name = entry, .resource_claim_name = claim, .resource_claim_template_name = std::nullopt};
}

}  // namespace topofit::decision::testing
