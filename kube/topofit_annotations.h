#pragma once

// Every annotation topofit reads or writes (and the gang labels of other projects it reads), named once:
// the scheduler, the expander, the API client and the bench all refer to these.

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

// Gangs (docs/gangs.md, decision/gang.h): pods placed all or nothing. For pods that no other source puts in
// a gang: the gang's name (unique in the pod's namespace) and how many pods it has, a whole number from 1.
// The size also fills in the count where the source has none (the Workload API's pods), and opts JobSet
// and Job pods in as gangs.
inline constexpr absl::string_view kGangAnnotation = "topofit.io/gang";
inline constexpr absl::string_view kGangSizeAnnotation = "topofit.io/gang-size";
// The topology a gang wants: "domain" (one multi-node NVLink domain), "node", or a node label key, as KAI's
// and Kueue's annotations take. Required: never split; preferred: kept when capacity allows.
inline constexpr absl::string_view kGangRequiredTopologyAnnotation = "topofit.io/gang-required-topology";
inline constexpr absl::string_view kGangPreferredTopologyAnnotation = "topofit.io/gang-preferred-topology";

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

// On a node group's template node: how many nodes one of its NVLink domains holds (18 for an NVL72 rack
// of 4-GPU trays), so that a scale-up can be sized in whole domains (decision/nvlink_domain.h).
inline constexpr absl::string_view kNodesPerDomainAnnotation = "topofit.io/nodes-per-domain";

// On a node: `nvidia-smi topo -m` output or a JSON descriptor, overriding the catalog.
inline constexpr absl::string_view kGpuTopologyAnnotation = "topofit.io/gpu-topology";
// On a node, written by the node agent: the GPUs its last health check found unhealthy (indices, the form of
// topofit.io/gpu-ids); absent while every GPU is healthy. The restart collector reads it to tell a GPU
// fault from an application's crash.
inline constexpr absl::string_view kUnhealthyGpusAnnotation = "topofit.io/unhealthy-gpus";

// Other projects' gang and topology keys that topofit reads on pods (decision/gang.h, docs/gangs.md).
// Kueue's plain-pod groups: the group's name (a label) and its pod count.
inline constexpr absl::string_view kKueuePodGroupNameLabel = "kueue.x-k8s.io/pod-group-name";
inline constexpr absl::string_view kKueuePodGroupTotalCountAnnotation = "kueue.x-k8s.io/pod-group-total-count";
// Kueue's topology-aware scheduling, on the pod template: a node label key.
inline constexpr absl::string_view kKueueRequiredTopologyAnnotation = "kueue.x-k8s.io/podset-required-topology";
inline constexpr absl::string_view kKueuePreferredTopologyAnnotation = "kueue.x-k8s.io/podset-preferred-topology";
// LeaderWorkerSet: one group (a leader and its workers) shares the group-key label; the set's name is a
// label and the group's size (pods, leader included) an annotation.
inline constexpr absl::string_view kLwsNameLabel = "leaderworkerset.sigs.k8s.io/name";
inline constexpr absl::string_view kLwsGroupKeyLabel = "leaderworkerset.sigs.k8s.io/group-key";
inline constexpr absl::string_view kLwsSizeAnnotation = "leaderworkerset.sigs.k8s.io/size";
// JobSet: the set's name, and which restart of the whole set the pod belongs to.
inline constexpr absl::string_view kJobSetNameLabel = "jobset.sigs.k8s.io/jobset-name";
inline constexpr absl::string_view kJobSetRestartAttemptLabel = "jobset.sigs.k8s.io/restart-attempt";
// A Job's pods (indexed or not) carry its name.
inline constexpr absl::string_view kJobNameLabel = "batch.kubernetes.io/job-name";
// KAI-Scheduler's topology annotations: a node label key.
inline constexpr absl::string_view kKaiRequiredPlacementAnnotation = "kai.scheduler/topology-required-placement";
inline constexpr absl::string_view kKaiPreferredPlacementAnnotation = "kai.scheduler/topology-preferred-placement";

}  // namespace topofit::kube
