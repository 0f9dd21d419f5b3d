#pragma once

// The slice of the Kubernetes core/v1 object model that topofit reads, as plain values. Filled by the JSON
// decoder (codec/kube_json.h, the extender's ExtenderArgs) and by the protobuf decoder (the expander's
// BestOptionsRequest), so nothing here knows about either wire format. Field names follow the API's
// camelCase names in snake_case; comments name the API field where the C++ name differs.
//
// Enumerations the API keeps as open strings are decoded into enums with an explicit kUnknown: a value
// this code does not know (a newer API, or the synthetic "operatorValue" of upstream's round-trip
// fixtures) must decode, and must then match nothing, as upstream's matchers do with such values.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace topofit::kube {

// Labels, annotations, nodeSelector. std::less<> lets callers look up by absl::string_view.
using StringMap = std::map<std::string, std::string, std::less<>>;

// Resource name -> quantity in thousandths of its unit (kube/quantity.h): {"cpu": 500} is half a core,
// {"nvidia.com/gpu": 2000} two GPUs, {"memory": 1073741824000} 1Gi.
using ResourceList = std::map<std::string, int64_t, std::less<>>;

inline constexpr char kResourceCpu[] = "cpu";
inline constexpr char kResourceMemory[] = "memory";
inline constexpr char kResourceNvidiaGpu[] = "nvidia.com/gpu";

struct OwnerReference {
  std::string kind;
  std::string name;
  bool controller = false;
  bool operator==(const OwnerReference&) const = default;
};

struct ObjectMeta {
  std::string name;
  std::string namespace_name;  // metadata.namespace
  std::string uid;
  std::string resource_version;
  std::string generate_name;
  int64_t creation_timestamp_seconds = 0;  // Unix seconds; 0 when unset
  bool has_deletion_timestamp = false;     // set while the object is being deleted
  StringMap labels;
  StringMap annotations;
  std::vector<OwnerReference> owner_references;
  bool operator==(const ObjectMeta&) const = default;
};

struct ResourceRequirements {
  ResourceList requests;
  ResourceList limits;
};

// Container.restartPolicy. Only init containers may set it upstream; kAlways makes an init container a
// sidecar (KEP-753), which changes how the pod's requests add up (kube/pod_resources.h).
enum class ContainerRestartPolicy { kUnset, kAlways, kOnFailure, kNever, kUnknown };

struct Container {
  std::string name;
  ResourceRequirements resources;
  ContainerRestartPolicy restart_policy = ContainerRestartPolicy::kUnset;
};

enum class NodeSelectorOperator { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt, kUnknown };

struct NodeSelectorRequirement {
  std::string key;
  NodeSelectorOperator op = NodeSelectorOperator::kUnknown;  // operator
  std::vector<std::string> values;
};

// Requirements ANDed. A term with neither list matches no node.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;  // on node labels
  std::vector<NodeSelectorRequirement> match_fields;       // on node fields: only metadata.name
};

// Terms ORed.
struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;  // nodeSelectorTerms
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
};

// Taint.effect and Toleration.effect. kNone is the empty string, meaningful in a toleration only
// (it tolerates every effect).
enum class TaintEffect { kNone, kNoSchedule, kPreferNoSchedule, kNoExecute, kUnknown };

// An empty operator means Equal upstream, so it decodes to kEqual. The alpha Lt/Gt operators
// (TaintTolerationComparisonOperators, off by default) decode to kUnknown and so tolerate nothing, as
// upstream does with the gate off.
enum class TolerationOperator { kEqual, kExists, kUnknown };

struct Toleration {
  std::string key;  // empty: every key (with kExists)
  TolerationOperator op = TolerationOperator::kEqual;  // operator
  std::string value;
  TaintEffect effect = TaintEffect::kNone;
  std::optional<int64_t> toleration_seconds;
};

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kUnknown;
  bool operator==(const Taint&) const = default;
};

// PodSpec.workloadRef (scheduling.k8s.io v1alpha1, Kubernetes 1.35, gate GenericWorkload): the Workload
// and the pod group within it that the pod belongs to. 1.36 replaced it by PodSchedulingGroup.
struct WorkloadReference {
  std::string name;                   // the Workload, in the pod's namespace
  std::string pod_group;              // podGroup: the group within the Workload
  std::string pod_group_replica_key;  // podGroupReplicaKey: which replica of the group; empty when unset
  bool operator==(const WorkloadReference&) const = default;
};

// PodSpec.schedulingGroup (scheduling.k8s.io v1alpha2, Kubernetes 1.36): the PodGroup object the pod
// belongs to, in the pod's namespace.
struct PodSchedulingGroup {
  std::string pod_group_name;  // podGroupName
  bool operator==(const PodSchedulingGroup&) const = default;
};

// spec.resourceClaims[]: a ResourceClaim the pod uses (Dynamic Resource Allocation), named directly or made
// for the pod from a ResourceClaimTemplate (its generated name then in status.resourceClaimStatuses).
struct PodResourceClaim {
  std::string name;  // the pod's own name for it
  std::optional<std::string> resource_claim_name;
  std::optional<std::string> resource_claim_template_name;
  bool operator==(const PodResourceClaim&) const = default;
};

// status.resourceClaimStatuses[]: the claim generated for a template entry of spec.resourceClaims.
struct PodResourceClaimStatus {
  std::string name;  // the spec.resourceClaims entry
  std::optional<std::string> resource_claim_name;  // unset: no claim was needed
  bool operator==(const PodResourceClaimStatus&) const = default;
};

// status.extendedResourceClaimStatus.requestMappings[]: a container's extended resource (e.g. nvidia.com/gpu)
// that DRA serves, and the request of the generated claim that serves it.
struct ContainerExtendedResourceRequest {
  std::string container_name;
  std::string resource_name;
  std::string request_name;
  bool operator==(const ContainerExtendedResourceRequest&) const = default;
};

// status.extendedResourceClaimStatus (KEP-5004, Kubernetes 1.34+): where a node's device plugin does not serve
// an extended resource the pod requests but a DeviceClass maps it to a DRA driver, kube-scheduler makes one
// ResourceClaim for the pod and names it here.
struct PodExtendedResourceClaimStatus {
  std::string resource_claim_name;
  std::vector<ContainerExtendedResourceRequest> request_mappings;
  bool operator==(const PodExtendedResourceClaimStatus&) const = default;
};

struct PodSpec {
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  ResourceList overhead;
  ResourceRequirements resources;  // pod-level resources (KEP-2837)
  StringMap node_selector;
  // affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution. Present but without a
  // non-empty term, it matches no node, so "absent" and "empty" are kept apart.
  std::optional<NodeSelector> required_node_affinity;
  // affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.
  std::vector<PreferredSchedulingTerm> preferred_node_affinity;
  std::vector<Toleration> tolerations;
  std::string scheduler_name;
  std::string node_name;
  std::optional<int32_t> priority;  // set by the Priority admission plugin
  std::string priority_class_name;
  // Gang membership through the Workload API (decision/gang.h); absent on pods of other releases.
  std::optional<WorkloadReference> workload_ref;
  std::optional<PodSchedulingGroup> scheduling_group;
  std::vector<PodResourceClaim> resource_claims;
};

// PodCondition and NodeCondition, reduced to what decisions read.
struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  bool operator==(const Condition&) const = default;
};

struct PodStatus {
  std::string phase;  // "Pending", "Running", "Succeeded", "Failed", "Unknown"; kept as the API string
  std::string nominated_node_name;
  std::vector<Condition> conditions;
  std::vector<PodResourceClaimStatus> resource_claim_statuses;
  std::optional<PodExtendedResourceClaimStatus> extended_resource_claim_status;
};

struct Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
};

struct NodeSpec {
  bool unschedulable = false;
  std::vector<Taint> taints;
  std::string provider_id;  // providerID
  bool operator==(const NodeSpec&) const = default;
};

struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;
  std::vector<Condition> conditions;
  bool operator==(const NodeStatus&) const = default;
};

struct Node {
  ObjectMeta metadata;
  NodeSpec spec;
  NodeStatus status;
  bool operator==(const Node&) const = default;
};

// The API strings of the enumerations above, shared by every decoder. Unknown strings map to kUnknown;
// the empty string maps to the API's default (kUnset, kNone, kEqual).
ContainerRestartPolicy ParseContainerRestartPolicy(absl::string_view value);
NodeSelectorOperator ParseNodeSelectorOperator(absl::string_view value);
TaintEffect ParseTaintEffect(absl::string_view value);
// The API string of an effect ("" for kNone); kUnknown, whose string was not kept, is "Unknown", which
// parses back to kUnknown.
absl::string_view TaintEffectName(TaintEffect effect);
TolerationOperator ParseTolerationOperator(absl::string_view value);

// Whether the node's kubelet reports it Ready. A node with no Ready condition at all (an object that never
// came from a kubelet) counts as ready: only a condition saying otherwise makes it not.
bool NodeIsReady(const Node& node);

}  // namespace topofit::kube
