#pragma once

// A pod's GPU demand when its GPUs may come from ResourceClaims (docs/dra.md), for the decisions that
// judge it as a whole rather than on one node's slices: the extender reads the claims before it judges
// each node (claim_fit.h), and the expander ranks node groups whose templates carry no slices at all.

#include <functional>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "decision/claim_demand.h"
#include "decision/pod_demand.h"
#include "kube/dra_objects.h"
#include "kube/objects.h"

namespace topofit::decision {

// Where claims are read from (a claim watch), and which of their requests ask for GPUs.
struct ClaimSource {
  std::function<std::optional<kube::ResourceClaim>(absl::string_view namespace_name, absl::string_view name)> claim;
  DraGpuClasses classes;
};

// ClaimGpuDemandOf for a pod whose own demand (DemandOf: its nvidia.com/gpu and topology annotations) is
// `demand`, with the GPUs it asks through a GPU class's own extended resource
// (`deviceclass.resource.kubernetes.io/<class>`, kube/pod_resources.h) counted as a claim kube-scheduler
// will make for it; InvalidArgument as well when it asks for GPUs both through nvidia.com/gpu and through
// claims, which no node can judge as one set.
absl::StatusOr<std::optional<ClaimGpuDemand>> PodClaimDemandOf(const kube::Pod& pod, const GpuDemand& demand,
                                                               const ClaimSource& claims);

// The pod's demand on nodes whose slices are not known: cluster-autoscaler's node-group templates carry
// none (its gRPC request holds Node objects only). DemandOf(pod), and for a pod whose GPUs come from
// claims, the claims' number of GPUs under the pod's own topology annotations; selectors and
// matchAttribute need a node's slices, so they are not judged here (the extender judges them on the node
// once it exists). allocationMode All asks every GPU of the node it lands on, a number no template-free
// demand has: it counts as one GPU. A claim the source has not seen yet leaves the pod as DemandOf reads it
// (asking no GPU), as it was before claims were read; one that cannot be judged is the error the extender
// answers with. `claims` null: DemandOf(pod).
absl::StatusOr<GpuDemand> DemandOnTemplates(const kube::Pod& pod, const ClaimSource* claims);

// `annotations` (DemandOf: the pod's topology ask) for the number of GPUs `claims` asks, as
// DemandOnTemplates counts them: what the pod's preference and the expander read of a claim pod.
GpuDemand CountedDemand(GpuDemand annotations, const ClaimGpuDemand& claims);

}  // namespace topofit::decision
