#include "decision/claim_pod_demand.h"

#include "absl/status/status.h"

namespace topofit::decision {

absl::StatusOr<std::optional<ClaimGpuDemand>> PodClaimDemandOf(const kube::Pod& pod, const GpuDemand& demand,
                                                               const ClaimSource& claims) {
  if (pod.spec.resource_claims.empty()) return std::nullopt;
  absl::StatusOr<std::optional<ClaimGpuDemand>> asked = ClaimGpuDemandOf(
      pod, [&claims](absl::string_view ns, absl::string_view name) { return claims.claim(ns, name); }, claims.classes);
  if (!asked.ok() || !*asked) return asked;
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
