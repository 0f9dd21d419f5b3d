#include "decision/claim_pod_demand.h"

#include <string>

#include "absl/status/status.h"
#include "kube/pod_resources.h"

namespace topofit::decision {

namespace {

// The GPUs the pod asks through the class-named extended resources of GPU DeviceClasses that no claim
// holds yet: kube-scheduler makes and allocates that claim in the cycle that binds the pod, and maps the
// resource to it in the pod's status, after which the claim's GPUs are held like any claim's.
absl::StatusOr<int> ClassNamedGpus(const kube::Pod& pod, const DraGpuClasses& classes) {
  int gpus = 0;
  for (const std::string& device_class : classes.device_classes) {
    const std::string resource = kube::DeviceClassResourceName(device_class);
    absl::StatusOr<int> asked = kube::WholeGpusRequested(pod, resource);
    if (!asked.ok()) return asked.status();
    if (*asked > 0 && kube::ExtendedResourceClaim(pod, resource).empty()) gpus += *asked;
  }
  return gpus;
}

}  // namespace

absl::StatusOr<std::optional<ClaimGpuDemand>> PodClaimDemandOf(const kube::Pod& pod, const GpuDemand& demand,
                                                               const ClaimSource& claims) {
  absl::StatusOr<std::optional<ClaimGpuDemand>> asked = std::nullopt;
  if (!pod.spec.resource_claims.empty()) {
    asked = ClaimGpuDemandOf(
        pod, [&claims](absl::string_view ns, absl::string_view name) { return claims.claim(ns, name); },
        claims.classes);
  }
  if (!asked.ok()) return asked;
  const absl::StatusOr<int> class_named = ClassNamedGpus(pod, claims.classes);
  if (!class_named.ok()) return class_named.status();
  // A claim of that many devices of the class, without selectors or constraints (the class's own selectors
  // pick GPUs), one set with those of the pod's own claims.
  if (*class_named > 0) {
    if (!*asked) asked = ClaimGpuDemand{};
    (*asked)->gpus += *class_named;
  }
  if (!*asked) return asked;
  if (demand.wants_gpus()) {
    return absl::InvalidArgumentError("asks for GPUs both through nvidia.com/gpu and through ResourceClaims");
  }
  return asked;
}

absl::StatusOr<GpuDemand> DemandOnTemplates(const kube::Pod& pod, const ClaimSource* claims) {
  absl::StatusOr<GpuDemand> demand = DemandOf(pod);
  if (!demand.ok() || claims == nullptr) return demand;
  const absl::StatusOr<std::optional<ClaimGpuDemand>> asked = PodClaimDemandOf(pod, *demand, *claims);
  if (absl::IsFailedPrecondition(asked.status())) return demand;
  if (!asked.ok()) return asked.status();
  if (*asked) return CountedDemand(*std::move(demand), **asked);
  return demand;
}

GpuDemand CountedDemand(GpuDemand annotations, const ClaimGpuDemand& claims) {
  annotations.request.gpus = claims.all ? 1 : claims.gpus;
  return annotations;
}

}  // namespace topofit::decision
