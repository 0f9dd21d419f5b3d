#include "kubeclient/kube_api.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codec/kube_json.h"
#include "codec/workload_api_json.h"

namespace topofit::kubeclient {

std::string PodPath(absl::string_view namespace_name, absl::string_view name) {
  return absl::StrCat("/api/v1/namespaces/", EscapePathSegment(namespace_name), "/pods/", EscapePathSegment(name));
}

std::string PodTemplatesPath(absl::string_view namespace_name) {
  return absl::StrCat("/api/v1/namespaces/", EscapePathSegment(namespace_name), "/podtemplates");
}

std::string ProvisioningRequestsPath(absl::string_view namespace_name) {
  return absl::StrCat("/apis/", kProvisioningApiVersion, "/namespaces/", EscapePathSegment(namespace_name),
                      "/provisioningrequests");
}

std::string ConfigMapsPath(absl::string_view namespace_name) {
  return absl::StrCat("/api/v1/namespaces/", EscapePathSegment(namespace_name), "/configmaps");
}

namespace {

std::string MetadataString(const nlohmann::json& object, const char* key) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) return "";
  const nlohmann::json& metadata = object["metadata"];
  return metadata.contains(key) && metadata[key].is_string() ? metadata[key].get<std::string>() : "";
}

absl::Status CreateIdempotently(RestClient& rest, const std::string& collection, const nlohmann::json& object) {
  if (MetadataString(object, "namespace").empty() || MetadataString(object, "name").empty()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot create in ", collection, ": no metadata.namespace or name"));
  }
  absl::Status status = rest.Post(collection, object).status();
  // 409 AlreadyExists (not a 409 Conflict): created before, and the pod-derived name makes it ours.
  if (absl::IsAlreadyExists(status)) return absl::OkStatus();
  return status;
}

absl::Status DeleteIdempotently(RestClient& rest, const std::string& path) {
  absl::Status status = rest.Delete(path).status();
  if (absl::IsNotFound(status)) return absl::OkStatus();
  return status;
}

}  // namespace

absl::Status KubeApi::CreatePodTemplate(const nlohmann::json& pod_template) {
  return CreateIdempotently(rest_, PodTemplatesPath(MetadataString(pod_template, "namespace")), pod_template);
}

absl::Status KubeApi::CreateProvisioningRequest(const nlohmann::json& provisioning_request) {
  return CreateIdempotently(rest_, ProvisioningRequestsPath(MetadataString(provisioning_request, "namespace")),
                            provisioning_request);
}

absl::Status KubeApi::DeletePodTemplate(const std::string& namespace_name, const std::string& name) {
  return DeleteIdempotently(rest_, absl::StrCat(PodTemplatesPath(namespace_name), "/", EscapePathSegment(name)));
}

absl::Status KubeApi::DeleteProvisioningRequest(const std::string& namespace_name, const std::string& name) {
  return DeleteIdempotently(rest_,
                            absl::StrCat(ProvisioningRequestsPath(namespace_name), "/", EscapePathSegment(name)));
}

absl::StatusOr<ProvisioningState> KubeApi::GetProvisioningState(const std::string& namespace_name,
                                                                const std::string& name) {
  absl::StatusOr<nlohmann::json> json =
      rest_.Get(absl::StrCat(ProvisioningRequestsPath(namespace_name), "/", EscapePathSegment(name)));
  if (!json.ok()) return json.status();
  return ProvisioningStateOf(*json);
}

absl::StatusOr<kube::StringMap> KubeApi::GetConfigMapData(const std::string& namespace_name,
                                                          const std::string& name) {
  absl::StatusOr<nlohmann::json> config_map =
      rest_.Get(absl::StrCat(ConfigMapsPath(namespace_name), "/", EscapePathSegment(name)));
  if (!config_map.ok()) return config_map.status();
  kube::StringMap data;
  if (!config_map->is_object() || !config_map->contains("data") || (*config_map)["data"].is_null()) return data;
  const nlohmann::json& entries = (*config_map)["data"];
  if (!entries.is_object()) return absl::InvalidArgumentError(absl::StrCat("configmap ", name, ": data is not an object"));
  for (const auto& [key, value] : entries.items()) {
    if (!value.is_string()) {
      return absl::InvalidArgumentError(absl::StrCat("configmap ", name, ": data[\"", key, "\"] is not a string"));
    }
    data.emplace(key, value.get<std::string>());
  }
  return data;
}

absl::Status KubeApi::SetConfigMapEntry(const std::string& namespace_name, const std::string& name,
                                        const std::string& key, const std::string& value) {
  const std::string collection = ConfigMapsPath(namespace_name);
  const nlohmann::json patch = {{"data", {{key, value}}}};
  absl::Status patched =
      rest_.Patch(absl::StrCat(collection, "/", EscapePathSegment(name)), patch, "application/merge-patch+json").status();
  if (!absl::IsNotFound(patched)) return patched;
  const nlohmann::json config_map = {{"apiVersion", "v1"},
                                     {"kind", "ConfigMap"},
                                     {"metadata", {{"name", name}, {"namespace", namespace_name}}},
                                     {"data", {{key, value}}}};
  absl::Status created = rest_.Post(collection, config_map).status();
  // Another writer created it first: this write goes in as a patch after all.
  if (absl::IsAlreadyExists(created)) {
    return rest_.Patch(absl::StrCat(collection, "/", EscapePathSegment(name)), patch, "application/merge-patch+json").status();
  }
  return created;
}

absl::StatusOr<nlohmann::json> KubeApi::GetPodObject(const std::string& namespace_name, const std::string& name) {
  return rest_.Get(PodPath(namespace_name, name));
}

absl::StatusOr<std::optional<int>> KubeApi::WorkloadGangMinCount(const kube::Pod& pod) {
  const std::optional<codec::WorkloadApiObject> named = codec::WorkloadApiObjectOf(pod);
  if (!named) return absl::InvalidArgumentError("the pod names no PodGroup or Workload");
  // The names come from the pod as kube-scheduler sent it: escaped, so that none reaches another path.
  absl::StatusOr<nlohmann::json> object =
      rest_.Get(absl::StrCat("/apis/", named->group_version, "/namespaces/", EscapePathSegment(named->namespace_name),
                             "/", named->resource, "/", EscapePathSegment(named->name)));
  if (!object.ok()) return object.status();
  return codec::GangMinCountIn(*object, pod);
}

absl::StatusOr<kube::Pod> KubeApi::GetPod(const std::string& namespace_name, const std::string& name) {
  absl::StatusOr<nlohmann::json> json = GetPodObject(namespace_name, name);
  if (!json.ok()) return json.status();
  return codec::PodFromJson(*json);
}

namespace {

std::string StringIn(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A LIST of core/v1 Events as "Reason: message", at most `limit`, as listed.
std::vector<std::string> WarningsIn(const nlohmann::json& list, int limit) {
  std::vector<std::string> warnings;
  const nlohmann::json* items = list.is_object() && list.contains("items") ? &list["items"] : nullptr;
  if (items == nullptr || !items->is_array()) return warnings;
  for (const nlohmann::json& event : *items) {
    if (static_cast<int>(warnings.size()) >= limit) break;
    if (!event.is_object()) continue;
    warnings.push_back(absl::StrCat(StringIn(event, "reason"), ": ", StringIn(event, "message")));
  }
  return warnings;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> KubeApi::PodWarnings(const std::string& namespace_name,
                                                              const std::string& uid, int limit) {
  absl::StatusOr<nlohmann::json> list = rest_.Get(absl::StrCat(
      "/api/v1/namespaces/", EscapePathSegment(namespace_name), "/events?fieldSelector=",
      EscapePathSegment(absl::StrCat("involvedObject.uid=", uid, ",type=Warning")), "&limit=", limit));
  if (!list.ok()) return list.status();
  return WarningsIn(*list, limit);
}

absl::StatusOr<std::vector<std::string>> KubeApi::NodeWarnings(const std::string& node, int limit) {
  absl::StatusOr<nlohmann::json> list = rest_.Get(absl::StrCat(
      "/api/v1/namespaces/default/events?fieldSelector=",
      EscapePathSegment(absl::StrCat("involvedObject.kind=Node,involvedObject.name=", node, ",type=Warning")),
      "&limit=", limit));
  if (!list.ok()) return list.status();
  return WarningsIn(*list, limit);
}

absl::StatusOr<KubeApi::NodeSummary> KubeApi::GetNodeSummary(const std::string& node) {
  absl::StatusOr<nlohmann::json> object = rest_.Get(absl::StrCat("/api/v1/nodes/", EscapePathSegment(node)));
  if (!object.ok()) return object.status();
  NodeSummary summary;
  if (!object->is_object()) return summary;
  if (const auto metadata = object->find("metadata"); metadata != object->end() && metadata->is_object()) {
    if (const auto listed = metadata->find("annotations"); listed != metadata->end() && listed->is_object()) {
      for (const auto& [key, value] : listed->items()) {
        if (value.is_string()) summary.annotations.emplace(key, value.get<std::string>());
      }
    }
  }
  const auto status = object->find("status");
  if (status == object->end() || !status->is_object()) return summary;
  const auto conditions = status->find("conditions");
  if (conditions == status->end() || !conditions->is_array()) return summary;
  std::vector<std::string> told;
  for (const nlohmann::json& condition : *conditions) {
    if (!condition.is_object()) continue;
    const std::string type = StringIn(condition, "type");
    const std::string holds = StringIn(condition, "status");
    const bool ready = type == "Ready";
    if (!ready && holds != "True") continue;  // a pressure that does not hold is news to nobody
    std::string text = absl::StrCat(type, "=", holds);
    const bool as_it_should_be = ready && holds == "True";
    if (!as_it_should_be && !StringIn(condition, "reason").empty()) absl::StrAppend(&text, " (", StringIn(condition, "reason"), ")");
    told.insert(ready ? told.begin() : told.end(), std::move(text));
  }
  summary.conditions = absl::StrJoin(told, ", ");
  return summary;
}

absl::StatusOr<std::string> KubeApi::PreviousLogTail(const std::string& namespace_name, const std::string& name,
                                                     const std::string& container, int lines, int64_t bytes) {
  return rest_.GetText(absl::StrCat(PodPath(namespace_name, name), "/log?container=", EscapePathSegment(container),
                                    "&previous=true&tailLines=", lines, "&limitBytes=", bytes));
}

absl::Status KubeApi::AnnotatePod(const std::string& namespace_name, const std::string& name,
                                  const std::string& key, const std::string& value) {
  return MergePodAnnotations(namespace_name, name, {{key, value}}).status();
}

absl::Status KubeApi::AnnotatePod(const std::string& namespace_name, const std::string& name,
                                 const kube::StringMap& annotations) {
  return MergePodAnnotations(namespace_name, name, annotations).status();
}

absl::Status KubeApi::RemovePodAnnotation(const std::string& namespace_name, const std::string& name,
                                          const std::string& key) {
  const nlohmann::json patch = {{"metadata", {{"annotations", {{key, nullptr}}}}}};  // null deletes the key
  return rest_.Patch(PodPath(namespace_name, name), patch, "application/merge-patch+json").status();
}

absl::StatusOr<std::string> KubeApi::MergePodAnnotations(const std::string& namespace_name, const std::string& name,
                                                         const kube::StringMap& annotations) {
  // A merge patch replaces only the keys it names, so other writers' annotations survive without a
  // read-modify-write cycle.
  const nlohmann::json patch = {{"metadata", {{"annotations", annotations}}}};
  absl::StatusOr<nlohmann::json> pod =
      rest_.Patch(PodPath(namespace_name, name), patch, "application/merge-patch+json");
  if (!pod.ok()) return pod.status();
  const nlohmann::json* version = &*pod;
  for (const char* key : {"metadata", "resourceVersion"}) {
    if (!version->is_object() || !version->contains(key)) return std::string();
    version = &(*version)[key];
  }
  return version->is_string() ? version->get<std::string>() : std::string();
}

absl::Status KubeApi::BindPod(const std::string& namespace_name, const std::string& name, const std::string& uid,
                              const std::string& node, const kube::StringMap& annotations) {
  nlohmann::json metadata = {{"name", name}, {"namespace", namespace_name}};
  if (!uid.empty()) metadata["uid"] = uid;
  if (!annotations.empty()) metadata["annotations"] = annotations;
  const nlohmann::json binding = {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata", std::move(metadata)},
      {"target", {{"kind", "Node"}, {"name", node}}},
  };
  return rest_.Post(absl::StrCat(PodPath(namespace_name, name), "/binding"), binding).status();
}

}  // namespace topofit::kubeclient
