#pragma once

// ProvisioningRequests (autoscaling.x-k8s.io/v1), the API objects only: pure builders for the PodTemplate
// and the ProvisioningRequest that ask cluster-autoscaler for a node a pending pod can use, and the
// reading of a request's conditions. No I/O here; KubeApi posts and deletes what these build.

#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kube/objects.h"

namespace topofit::kubeclient {

inline constexpr char kProvisioningApiVersion[] = "autoscaling.x-k8s.io/v1";
inline constexpr char kBestEffortAtomicScaleUp[] = "best-effort-atomic-scale-up.autoscaling.x-k8s.io";

// The name shared by a pod's PodTemplate and ProvisioningRequest: "topofit-<pod name>". When that would
// pass 253 characters (a DNS-1123 subdomain's limit; pod names are subdomains already), it is cut and
// ends in "-" and 16 hex digits of a stable 64-bit FNV-1a hash of the whole pod name, so that two long
// names sharing a prefix still differ.
std::string ProvisioningObjectName(absl::string_view pod_name);

// The PodTemplate (v1) for `pod`, the pod's JSON as the API server returns it. It keeps only what
// scheduling reads: labels, the pod-facing topofit.io/ annotations (min-link, min-bandwidth,
// topology-policy) plus `topofit.io/stands-for-pod-uid` naming the pod, and from the spec the
// containers' and init containers' names, images, resources, ports and restart policies, nodeSelector,
// affinity, tolerations, topologySpreadConstraints, priorityClassName, priority, preemptionPolicy,
// schedulerName, runtimeClassName, overhead, hostNetwork. With `shapes` (ORed terms naming the node shapes
// that give the pod's set, decision/capacity_shapes.h), each required node-affinity term of the pod becomes
// one term per shape, ANDed with it (no term: the shapes are the terms), so CA books and grows only nodes
// of those shapes. To every term it then adds `kubernetes.io/hostname NotIn refused_nodes` (terms are ORed,
// so the exclusion must be in each); with no term, it becomes the one term. Nothing is added when both are
// empty. The pod's ResourceClaims are named by the claims it uses (its own resourceClaimName, or the one
// made from its template, status.resourceClaimStatuses), with the containers' references to them:
// cluster-autoscaler's simulation then allocates the pod's very claim on the nodes it imagines, and a
// claim template it could not (it makes no claim for a pod that exists only in its simulation). Owned by
// the pod, so it goes when the pod goes. InvalidArgument when the pod lacks a name, namespace or uid;
// FailedPrecondition when a claim of its template is not made yet.
absl::StatusOr<nlohmann::json> PodTemplateForPod(const nlohmann::json& pod,
                                                 const std::vector<std::string>& refused_nodes,
                                                 const std::vector<kube::NodeSelectorTerm>& shapes = {});

// A pod template (metadata and spec) of what scheduling reads of `pod` (the API server's JSON): its labels,
// the `annotations` named, and the spec fields PodTemplateForPod lists. No ResourceClaims, and no
// references to them in the containers (a template naming a claim the pod spec lacks is invalid): it stands
// for pods not made yet, which have no claims of their own, and cluster-autoscaler makes none from a claim
// template for the pods it imagines (it finds them unschedulable). Shared by ProvisioningRequests and
// CapacityBuffers (capacity_buffers.h).
nlohmann::json SchedulingTemplateOf(const nlohmann::json& pod, std::initializer_list<absl::string_view> annotations);

// The ProvisioningRequest for `pod`: class best-effort-atomic-scale-up, one podSet of count 1 referring to
// the PodTemplate of the same name, owned by the pod. InvalidArgument as above.
absl::StatusOr<nlohmann::json> ProvisioningRequestForPod(const nlohmann::json& pod);

// A gang's objects (one PodTemplate and one ProvisioningRequest per gang, docs/gangs.md): named
// "topofit-gang-<the gang id as a DNS name>-<16 hex digits of its FNV-1a hash>", at most 253 characters.
std::string GangProvisioningObjectName(absl::string_view gang_id);

// The PodTemplate for a gang, from `member` (one of its pods, as the API server returns it): as
// PodTemplateForPod but without claims (SchedulingTemplateOf; a ComputeDomain's channel is one per node,
// which the domain term below already asks for), with the gang's own annotations (topofit's, Kueue's,
// LeaderWorkerSet's, KAI's) kept so that the expander judges the request's pods as the gang's, and every
// required node-affinity term ANDed with `domain` (the group and domain to grow,
// decision/gang_capacity_target.h). Owned by `member`.
absl::StatusOr<nlohmann::json> PodTemplateForGang(const nlohmann::json& member, absl::string_view gang_id,
                                                  const kube::NodeSelectorTerm& domain);

// The gang's ProvisioningRequest: best-effort-atomic-scale-up, one podSet of `count` pods referring to the
// gang's PodTemplate, owned by `member`. InvalidArgument as above, or for a count below 1.
absl::StatusOr<nlohmann::json> ProvisioningRequestForGang(const nlohmann::json& member, absl::string_view gang_id,
                                                          int count);

// A gang of claim pods asks with one pod set per member (its own template naming that member's claims:
// cluster-autoscaler makes no claim for the pods it imagines, kubeclient/provisioning.h's PodTemplateForPod):
// the template of the gang's member `index` (0-based), named "topofit-gang-<...>-member-<index>-<hash>" (the
// gang's name with "/member-<index>" added to its id).
std::string GangMemberTemplateName(absl::string_view gang_id, int index);

// That template, from `member` (as the API server returns it): as PodTemplateForGang, with the member's claims
// named as PodTemplateForPod names them, and owned by `member`. FailedPrecondition when a claim of its
// template is not made yet.
absl::StatusOr<nlohmann::json> PodTemplateForGangMember(const nlohmann::json& member, absl::string_view gang_id,
                                                        int index, const kube::NodeSelectorTerm& domain);

// The gang's ProvisioningRequest for `members` members of their own templates (GangMemberTemplateName 0 to
// members - 1, a pod set of count 1 each), named and owned as ProvisioningRequestForGang's. InvalidArgument
// for fewer than 1 or more than scheduler::kMostClaimMembers members (the CRD's limit on pod sets).
absl::StatusOr<nlohmann::json> ProvisioningRequestForGangMembers(const nlohmann::json& owner, absl::string_view gang_id,
                                                                 int members);

// What a ProvisioningRequest's status.conditions say (a condition counts when its status is "True").
struct ProvisioningState {
  bool provisioned = false;
  bool failed = false;
  bool booking_expired = false;
  bool capacity_revoked = false;
  // Provisioned=False with reason CapacityIsNotFound: cluster-autoscaler found no group it may grow that
  // takes the pods now (at its maximum size, out of quota, none fits), and tries again later.
  bool capacity_not_found = false;
  std::string message;  // the Provisioned condition's message, else the Failed one's
};
ProvisioningState ProvisioningStateOf(const nlohmann::json& provisioning_request);

}  // namespace topofit::kubeclient
