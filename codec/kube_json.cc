#include "codec/kube_json.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "codec/decode_path.h"
#include "codec/json_read.h"
#include "kube/quantity.h"
#include "topology/quoted.h"

namespace topofit::codec {
namespace {

using Json = nlohmann::json;
using namespace json_read;  // the readers every Kubernetes decoder shares

// resource.Quantity's UnmarshalJSON takes a string (spaces trimmed) or a bare JSON number, and null as 0.
absl::Status ReadQuantity(const Json& value, const std::string& path, int64_t* milli) {
  if (value.is_null()) {
    *milli = 0;
    return absl::OkStatus();
  }
  std::string text;
  if (value.is_string()) {
    text = std::string(absl::StripAsciiWhitespace(value.get_ref<const std::string&>()));
  } else if (value.is_number()) {
    text = value.dump();  // numbers always dump; "1e+20" is quantity syntax too
  } else {
    return TypeError(path, "a quantity string", value);
  }
  absl::StatusOr<int64_t> parsed = kube::ParseQuantityMilli(text);
  // The parser's message says what is wrong ("not a quantity: ...", "... is too large: ..."); the path
  // says where.
  if (!parsed.ok()) return PathError(path, parsed.status().message());
  *milli = *parsed;
  return absl::OkStatus();
}

absl::Status ReadResourceList(const Json& parent, absl::string_view key, const std::string& path,
                              kube::ResourceList* out) {
  return ReadObject(parent, key, path, [&](const Json& object, const std::string& list_path) {
    for (const auto& [name, value] : object.items()) {
      TOPOFIT_RETURN_IF_ERROR(ReadQuantity(value, MapKey(list_path, name), &(*out)[name]));
    }
    return absl::OkStatus();
  });
}

absl::Status ReadResourceRequirements(const Json& json, const std::string& path, kube::ResourceRequirements* out) {
  TOPOFIT_RETURN_IF_ERROR(ReadResourceList(json, "requests", path, &out->requests));
  return ReadResourceList(json, "limits", path, &out->limits);
}

// The element readers below take (value, path, out) so that ReadArray can call them; each accepts null.

absl::Status ReadContainer(const Json& json, const std::string& path, kube::Container* out) {
  if (json.is_null()) return absl::OkStatus();
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "name", path, &out->name));
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "resources", path, [&](const Json& resources, const std::string& p) {
    return ReadResourceRequirements(resources, p, &out->resources);
  }));
  std::string restart_policy;
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "restartPolicy", path, &restart_policy));
  out->restart_policy = kube::ParseContainerRestartPolicy(restart_policy);
  return absl::OkStatus();
}

absl::Status ReadRequirement(const Json& json, const std::string& path, kube::NodeSelectorRequirement* out) {
  if (json.is_null()) return absl::OkStatus();
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "key", path, &out->key));
  std::string op;
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "operator", path, &op));
  out->op = kube::ParseNodeSelectorOperator(op);
  return ReadStrings(json, "values", path, &out->values);
}

absl::Status ReadTerm(const Json& json, const std::string& path, kube::NodeSelectorTerm* out) {
  if (json.is_null()) return absl::OkStatus();
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadArray(json, "matchExpressions", path, &out->match_expressions, ReadRequirement));
  return ReadArray(json, "matchFields", path, &out->match_fields, ReadRequirement);
}

absl::Status ReadPreferredTerm(const Json& json, const std::string& path, kube::PreferredSchedulingTerm* out) {
  if (json.is_null()) return absl::OkStatus();
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadInt32(json, "weight", path, &out->weight));
  return ReadObject(json, "preference", path,
                    [&](const Json& term, const std::string& p) { return ReadTerm(term, p, &out->preference); });
}

absl::Status ReadNodeAffinity(const Json& json, const std::string& path, kube::PodSpec* out) {
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "requiredDuringSchedulingIgnoredDuringExecution", path,
                                     [&](const Json& selector, const std::string& p) {
                                       out->required_node_affinity.emplace();
                                       return ReadArray(selector, "nodeSelectorTerms", p,
                                                        &out->required_node_affinity->terms, ReadTerm);
                                     }));
  return ReadArray(json, "preferredDuringSchedulingIgnoredDuringExecution", path, &out->preferred_node_affinity,
                   ReadPreferredTerm);
}

absl::Status ReadToleration(const Json& json, const std::string& path, kube::Toleration* out) {
  if (json.is_null()) return absl::OkStatus();
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "key", path, &out->key));
  std::string op;
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "operator", path, &op));
  out->op = kube::ParseTolerationOperator(op);
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "value", path, &out->value));
  std::string effect;
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "effect", path, &effect));
  out->effect = kube::ParseTaintEffect(effect);
  return ReadInt(json, "tolerationSeconds", path, std::numeric_limits<int64_t>::min(),
                 std::numeric_limits<int64_t>::max(), &out->toleration_seconds);
}

absl::Status ReadTaint(const Json& json, const std::string& path, kube::Taint* out) {
  if (json.is_null()) return absl::OkStatus();
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "key", path, &out->key));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "value", path, &out->value));
  std::string effect;
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "effect", path, &effect));
  out->effect = kube::ParseTaintEffect(effect);
  return absl::OkStatus();
}

absl::Status ReadCondition(const Json& json, const std::string& path, kube::Condition* out) {
  if (json.is_null()) return absl::OkStatus();
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "type", path, &out->type));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "status", path, &out->status));
  return ReadString(json, "reason", path, &out->reason);
}

absl::Status ReadPodResourceClaim(const Json& json, const std::string& path, kube::PodResourceClaim* out) {
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "name", path, &out->name));
  TOPOFIT_RETURN_IF_ERROR(ReadOptionalString(json, "resourceClaimName", path, &out->resource_claim_name));
  return ReadOptionalString(json, "resourceClaimTemplateName", path, &out->resource_claim_template_name);
}

absl::Status ReadPodResourceClaimStatus(const Json& json, const std::string& path, kube::PodResourceClaimStatus* out) {
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "name", path, &out->name));
  return ReadOptionalString(json, "resourceClaimName", path, &out->resource_claim_name);
}

absl::Status ReadContainerExtendedResourceRequest(const Json& json, const std::string& path,
                                                  kube::ContainerExtendedResourceRequest* out) {
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "containerName", path, &out->container_name));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "resourceName", path, &out->resource_name));
  return ReadString(json, "requestName", path, &out->request_name);
}

absl::Status ReadPodSpec(const Json& json, const std::string& path, kube::PodSpec* out) {
  TOPOFIT_RETURN_IF_ERROR(ReadArray(json, "containers", path, &out->containers, ReadContainer));
  TOPOFIT_RETURN_IF_ERROR(ReadArray(json, "initContainers", path, &out->init_containers, ReadContainer));
  TOPOFIT_RETURN_IF_ERROR(ReadResourceList(json, "overhead", path, &out->overhead));
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "resources", path, [&](const Json& resources, const std::string& p) {
    return ReadResourceRequirements(resources, p, &out->resources);
  }));
  TOPOFIT_RETURN_IF_ERROR(ReadStringMap(json, "nodeSelector", path, &out->node_selector));
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "affinity", path, [&](const Json& affinity, const std::string& p) {
    return ReadObject(affinity, "nodeAffinity", p, [&](const Json& node_affinity, const std::string& q) {
      return ReadNodeAffinity(node_affinity, q, out);
    });
  }));
  TOPOFIT_RETURN_IF_ERROR(ReadArray(json, "tolerations", path, &out->tolerations, ReadToleration));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "schedulerName", path, &out->scheduler_name));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "nodeName", path, &out->node_name));
  std::optional<int64_t> priority;
  TOPOFIT_RETURN_IF_ERROR(ReadInt(json, "priority", path, std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::max(), &priority));
  if (priority) out->priority = static_cast<int32_t>(*priority);
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "priorityClassName", path, &out->priority_class_name));
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "workloadRef", path, [&](const Json& ref, const std::string& p) {
    kube::WorkloadReference& workload = out->workload_ref.emplace();
    TOPOFIT_RETURN_IF_ERROR(ReadString(ref, "name", p, &workload.name));
    TOPOFIT_RETURN_IF_ERROR(ReadString(ref, "podGroup", p, &workload.pod_group));
    return ReadString(ref, "podGroupReplicaKey", p, &workload.pod_group_replica_key);
  }));
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "schedulingGroup", path, [&](const Json& group, const std::string& p) {
    return ReadString(group, "podGroupName", p, &out->scheduling_group.emplace().pod_group_name);
  }));
  return ReadArray(json, "resourceClaims", path, &out->resource_claims, ReadPodResourceClaim);
}

absl::Status ReadPodStatus(const Json& json, const std::string& path, kube::PodStatus* out) {
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "phase", path, &out->phase));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "nominatedNodeName", path, &out->nominated_node_name));
  TOPOFIT_RETURN_IF_ERROR(ReadArray(json, "conditions", path, &out->conditions, ReadCondition));
  TOPOFIT_RETURN_IF_ERROR(
      ReadArray(json, "resourceClaimStatuses", path, &out->resource_claim_statuses, ReadPodResourceClaimStatus));
  return ReadObject(json, "extendedResourceClaimStatus", path, [&](const Json& claim, const std::string& p) {
    kube::PodExtendedResourceClaimStatus& read = out->extended_resource_claim_status.emplace();
    TOPOFIT_RETURN_IF_ERROR(ReadString(claim, "resourceClaimName", p, &read.resource_claim_name));
    return ReadArray(claim, "requestMappings", p, &read.request_mappings, ReadContainerExtendedResourceRequest);
  });
}

absl::Status ReadNodeSpec(const Json& json, const std::string& path, kube::NodeSpec* out) {
  TOPOFIT_RETURN_IF_ERROR(ReadBool(json, "unschedulable", path, &out->unschedulable));
  TOPOFIT_RETURN_IF_ERROR(ReadArray(json, "taints", path, &out->taints, ReadTaint));
  return ReadString(json, "providerID", path, &out->provider_id);
}

absl::Status ReadNodeStatus(const Json& json, const std::string& path, kube::NodeStatus* out) {
  TOPOFIT_RETURN_IF_ERROR(ReadResourceList(json, "capacity", path, &out->capacity));
  TOPOFIT_RETURN_IF_ERROR(ReadResourceList(json, "allocatable", path, &out->allocatable));
  return ReadArray(json, "conditions", path, &out->conditions, ReadCondition);
}

// Pod and Node share their shape: metadata, spec, status.
template <typename Object, typename ReadSpec, typename ReadStatus>
absl::StatusOr<Object> ReadTopLevel(const Json& json, absl::string_view kind, ReadSpec read_spec,
                                    ReadStatus read_status) {
  // Every accessor above checks types before reading, so nothing should throw; this catch is the
  // guarantee that a mistake there still becomes a status rather than a crash of the server.
  try {
    if (!json.is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(kind, ": expected an object, found ", json.type_name()));
    }
    Object object;
    TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "metadata", "", [&](const Json& value, const std::string& path) {
      return ReadObjectMeta(value, path, &object.metadata);
    }));
    TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "spec", "", [&](const Json& value, const std::string& path) {
      return read_spec(value, path, &object.spec);
    }));
    TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "status", "", [&](const Json& value, const std::string& path) {
      return read_status(value, path, &object.status);
    }));
    return object;
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(kind, ": ", e.what()));
  }
}

#undef TOPOFIT_RETURN_IF_ERROR

}  // namespace

absl::StatusOr<kube::Pod> PodFromJson(const nlohmann::json& json) {
  return ReadTopLevel<kube::Pod>(json, "pod", ReadPodSpec, ReadPodStatus);
}

absl::StatusOr<kube::Node> NodeFromJson(const nlohmann::json& json) {
  return ReadTopLevel<kube::Node>(json, "node", ReadNodeSpec, ReadNodeStatus);
}

namespace {

std::string QuantityText(int64_t milli) {
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : absl::StrCat(milli, "m");
}

nlohmann::json ResourceListJson(const kube::ResourceList& resources) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, milli] : resources) out[name] = QuantityText(milli);
  return out;
}

}  // namespace

nlohmann::json NodeTemplateToJson(const kube::Node& node) {
  nlohmann::json metadata = {{"name", node.metadata.name}};
  if (!node.metadata.labels.empty()) metadata["labels"] = node.metadata.labels;
  if (!node.metadata.annotations.empty()) metadata["annotations"] = node.metadata.annotations;
  nlohmann::json taints = nlohmann::json::array();
  for (const kube::Taint& taint : node.spec.taints) {
    taints.push_back({{"key", taint.key}, {"value", taint.value}, {"effect", kube::TaintEffectName(taint.effect)}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", std::move(metadata)},
          {"spec", {{"taints", std::move(taints)}}},
          {"status", {{"capacity", ResourceListJson(node.status.capacity)},
                      {"allocatable", ResourceListJson(node.status.allocatable)}}}};
}

}  // namespace topofit::codec
