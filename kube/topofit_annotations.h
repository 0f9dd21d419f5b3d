#pragma once

// Every annotation topofit reads or writes, named once: the scheduler, the expander, the API client and
// the bench all refer to these.

#include "absl/strings/string_view.h"

namespace topofit::kube {

// The pod-facing contract (README.md, "Pod annotations"): set by users, all optional.
inline constexpr absl::string_view kMinLinkAnnotation = "topofit.io/min-link";
inline constexpr absl::string_view kMinBandwidthAnnotation = "topofit.io/min-bandwidth";
inline constexpr absl::string_view kTopologyPolicyAnnotation = "topofit.io/topology-policy";
// How long the pod is expected to run on its best set, as a Go-style duration ("90m", "2h30m"): weighs
// waiting for a preferred topology against running slower now (decision/capacity_wait.h). Absent: as long
// as it is left running (a service replica), so a bounded wait always pays.
inline constexpr absl::string_view kExpectedRuntimeAnnotation = "topofit.io/expected-runtime";

// Written at bind: the GPU ids topofit chose, "0,1,4".
inline constexpr absl::string_view kGpuIdsAnnotation = "topofit.io/gpu-ids";
// Written at bind with the GPU ids: when the extender bound the pod (RFC 3339, microseconds, UTC). The node
// agent gives pods their chosen GPUs in this order, the order the kubelet admits them in.
inline constexpr absl::string_view kBoundAtAnnotation = "topofit.io/bound-at";
// Written by the node agent when the kubelet allocates a pod's devices: the GPU ids it gave, "0,1,4".
inline constexpr absl::string_view kGpuAllocatedAnnotation = "topofit.io/gpu-allocated";

// On a ProvisioningRequest's PodTemplate: the uid of the pending pod it asks capacity for. The pods CA
// makes from the template carry it, so the expander attributes their scale-up to the real pod.
inline constexpr absl::string_view kStandsForPodUidAnnotation = "topofit.io/stands-for-pod-uid";

// cluster-autoscaler's: on a pod, the ProvisioningRequest it consumes (CA also still accepts the deprecated
// "cluster-autoscaler.kubernetes.io/consume-provisioning-request"). topofit sets it on pods it asked
// capacity for.
inline constexpr absl::string_view kConsumeProvisioningRequestAnnotation =
    "autoscaling.x-k8s.io/consume-provisioning-request";

// cluster-autoscaler's: "false" on a pod keeps CA's scale-down from draining its node while it runs. The
// extender's drain guard (scheduler/drain_guard.h) sets and removes it on the pods it keeps.
inline constexpr absl::string_view kSafeToEvictAnnotation = "cluster-autoscaler.kubernetes.io/safe-to-evict";

// The ledger in the API (kubeclient/ledger_annotations.h): on a pending pod no node could serve, what its
// spec does not say of its placement preference; on each pod a scale-up was chosen for, that intent.
inline constexpr absl::string_view kPlacementPreferenceAnnotation = "topofit.io/placement-preference";
inline constexpr absl::string_view kScaleUpIntentAnnotation = "topofit.io/scale-up-intent";

// Written by the admission webhook (webhook/admission.h) with the required node affinity it added to a pod,
// so that a second call for the same pod (reinvocation) leaves it as it is.
inline constexpr absl::string_view kTopologyAffinityAnnotation = "topofit.io/topology-affinity";

// On a node: `nvidia-smi topo -m` output or a JSON descriptor, overriding the catalog.
inline constexpr absl::string_view kGpuTopologyAnnotation = "topofit.io/gpu-topology";

}  // namespace topofit::kube
