#include "codec/extender_json.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codec/kube_json.h"

namespace topofit::codec {
namespace {

using Json = nlohmann::json;

absl::StatusOr<Json> ParseObject(absl::string_view body, absl::string_view what) {
  Json json = Json::parse(body.begin(), body.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(what, ": malformed JSON"));
  if (!json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": expected a JSON object, found ", json.type_name()));
  }
  return json;
}

// Go matches struct fields to keys case-insensitively; null reads as absent.
const Json* Member(const Json& object, absl::string_view key) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (absl::EqualsIgnoreCase(it.key(), key)) return it->is_null() ? nullptr : &it.value();
  }
  return nullptr;
}
Json* Member(Json& object, absl::string_view key) {
  return const_cast<Json*>(Member(static_cast<const Json&>(object), key));
}

absl::Status TypeError(absl::string_view path, absl::string_view expected, const Json& found) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": expected ", expected, ", found ", found.type_name()));
}

absl::StatusOr<std::string> ReadString(const Json& object, absl::string_view key) {
  const Json* value = Member(object, key);
  if (value == nullptr) return std::string();
  if (!value->is_string()) return TypeError(key, "a string", *value);
  return value->get<std::string>();
}

absl::StatusOr<kube::Pod> ReadPod(const Json& args) {
  const Json* pod = Member(args, "Pod");
  if (pod == nullptr) return absl::InvalidArgumentError("Pod: missing");
  if (!pod->is_object()) return TypeError("Pod", "an object", *pod);
  absl::StatusOr<kube::Pod> decoded = PodFromJson(*pod);
  if (!decoded.ok()) return absl::InvalidArgumentError(absl::StrCat("Pod.", decoded.status().message()));
  return decoded;
}

absl::StatusOr<std::vector<std::string>> ReadStrings(const Json& array, absl::string_view path) {
  if (!array.is_array()) return TypeError(path, "an array", array);
  std::vector<std::string> out;
  out.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i) {
    if (!array[i].is_string()) return TypeError(absl::StrCat(path, "[", i, "]"), "a string", array[i]);
    out.push_back(array[i].get<std::string>());
  }
  return out;
}

// Moves each item out of `list` into its NodeArg (the parsed document is not read again), so a node's
// object is not copied: with thousands of 10 KB nodes per request the copies cost as much as the decoding.
absl::StatusOr<std::vector<NodeArg>> ReadNodes(Json& list) {
  if (!list.is_object()) return TypeError("Nodes", "a NodeList object", list);
  std::vector<NodeArg> out;
  Json* items = Member(list, "items");
  if (items == nullptr) return out;
  if (!items->is_array()) return TypeError("Nodes.items", "an array", *items);
  out.reserve(items->size());
  for (size_t i = 0; i < items->size(); ++i) {
    Json& raw = (*items)[i];
    const std::string path = absl::StrCat("Nodes.items[", i, "]");
    if (!raw.is_object()) return TypeError(path, "an object", raw);
    absl::StatusOr<kube::Node> node = NodeFromJson(raw);
    if (!node.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ".", node.status().message()));
    if (node->metadata.name.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ".metadata.name: missing"));
    out.push_back(NodeArg{*std::move(node), std::move(raw)});
  }
  return out;
}

// One node's entry of NodeNameToVictims ({"Pods": [v1.Pod]}) or NodeNameToMetaVictims ({"Pods": [{"UID"}]}).
absl::StatusOr<MetaVictims> ReadVictims(const Json& entry, const std::string& path, bool full_pods) {
  if (!entry.is_object()) return TypeError(path, "an object", entry);
  MetaVictims victims;
  if (const Json* pdb = Member(entry, "NumPDBViolations"); pdb != nullptr) {
    if (!pdb->is_number_integer()) return TypeError(path + ".NumPDBViolations", "an integer", *pdb);
    victims.num_pdb_violations = pdb->get<int64_t>();
  }
  const Json* pods = Member(entry, "Pods");
  if (pods == nullptr) return victims;
  if (!pods->is_array()) return TypeError(path + ".Pods", "an array", *pods);
  for (size_t i = 0; i < pods->size(); ++i) {
    const Json& pod = (*pods)[i];
    const std::string pod_path = absl::StrCat(path, ".Pods[", i, "]");
    if (!pod.is_object()) return TypeError(pod_path, "an object", pod);
    std::string uid;
    if (full_pods) {
      absl::StatusOr<kube::Pod> decoded = PodFromJson(pod);
      if (!decoded.ok()) return absl::InvalidArgumentError(absl::StrCat(pod_path, ".", decoded.status().message()));
      uid = decoded->metadata.uid;
    } else {
      absl::StatusOr<std::string> meta_uid = ReadString(pod, "UID");
      if (!meta_uid.ok()) return absl::InvalidArgumentError(absl::StrCat(pod_path, ".", meta_uid.status().message()));
      uid = *meta_uid;
    }
    if (uid.empty()) return absl::InvalidArgumentError(absl::StrCat(pod_path, ": no uid"));
    victims.pod_uids.push_back(std::move(uid));
  }
  return victims;
}

}  // namespace

absl::StatusOr<ExtenderArgs> ParseExtenderArgs(absl::string_view body) {
  absl::StatusOr<Json> json = ParseObject(body, "ExtenderArgs");
  if (!json.ok()) return json.status();
  ExtenderArgs args;
  absl::StatusOr<kube::Pod> pod = ReadPod(*json);
  if (!pod.ok()) return pod.status();
  args.pod = *std::move(pod);
  if (Json* nodes = Member(*json, "Nodes"); nodes != nullptr) {
    absl::StatusOr<std::vector<NodeArg>> read = ReadNodes(*nodes);
    if (!read.ok()) return read.status();
    args.nodes = *std::move(read);
  }
  if (const Json* names = Member(*json, "NodeNames"); names != nullptr) {
    absl::StatusOr<std::vector<std::string>> read = ReadStrings(*names, "NodeNames");
    if (!read.ok()) return read.status();
    args.node_names = *std::move(read);
  }
  return args;
}

absl::StatusOr<ExtenderBindingArgs> ParseBindingArgs(absl::string_view body) {
  absl::StatusOr<Json> json = ParseObject(body, "ExtenderBindingArgs");
  if (!json.ok()) return json.status();
  ExtenderBindingArgs args;
  for (auto [key, field] : {std::pair{"PodName", &args.pod_name}, std::pair{"PodNamespace", &args.pod_namespace},
                            std::pair{"PodUID", &args.pod_uid}, std::pair{"Node", &args.node}}) {
    absl::StatusOr<std::string> value = ReadString(*json, key);
    if (!value.ok()) return value.status();
    if (value->empty()) return absl::InvalidArgumentError(absl::StrCat(key, ": missing"));
    *field = *std::move(value);
  }
  return args;
}

absl::StatusOr<ExtenderPreemptionArgs> ParsePreemptionArgs(absl::string_view body) {
  absl::StatusOr<Json> json = ParseObject(body, "ExtenderPreemptionArgs");
  if (!json.ok()) return json.status();
  ExtenderPreemptionArgs args;
  absl::StatusOr<kube::Pod> pod = ReadPod(*json);
  if (!pod.ok()) return pod.status();
  args.pod = *std::move(pod);
  for (auto [key, full_pods] : {std::pair{"NodeNameToVictims", true}, std::pair{"NodeNameToMetaVictims", false}}) {
    const Json* map = Member(*json, key);
    if (map == nullptr) continue;
    if (!map->is_object()) return TypeError(key, "an object", *map);
    for (auto it = map->begin(); it != map->end(); ++it) {
      absl::StatusOr<MetaVictims> victims = ReadVictims(it.value(), absl::StrCat(key, "[\"", it.key(), "\"]"), full_pods);
      if (!victims.ok()) return victims.status();
      args.victims[it.key()] = *std::move(victims);
    }
  }
  return args;
}

std::string SerializeFilterResult(const ExtenderFilterResult& result) {
  Json out = Json::object();
  out["NodeNames"] = result.node_names ? Json(*result.node_names) : Json(nullptr);
  out["FailedNodes"] = result.failed_nodes;
  out["FailedAndUnresolvableNodes"] = result.failed_and_unresolvable_nodes;
  out["Error"] = result.error;
  std::string text = out.dump(-1, ' ', false, Json::error_handler_t::replace);
  // "Nodes" is written by hand, each passing node dumped where it lies rather than copied into `out`
  // first. The bytes are what dump() of the whole object gives: keys sorted, so "Nodes" comes last and
  // "items" before "metadata".
  text.pop_back();  // the closing brace
  if (result.nodes) {
    text.append(",\"Nodes\":{\"items\":[");
    for (size_t i = 0; i < result.nodes->size(); ++i) {
      if (i > 0) text.push_back(',');
      text.append((*result.nodes)[i]->dump(-1, ' ', false, Json::error_handler_t::replace));
    }
    text.append("],\"metadata\":{}}}");
  } else {
    text.append(",\"Nodes\":null}");
  }
  return text;
}

std::string SerializeHostPriorityList(const std::vector<HostPriority>& priorities) {
  Json out = Json::array();
  for (const HostPriority& p : priorities) out.push_back({{"Host", p.host}, {"Score", p.score}});
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string SerializeBindingResult(absl::string_view error) {
  return Json{{"Error", std::string(error)}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string SerializePreemptionResult(const std::map<std::string, MetaVictims>& victims) {
  Json map = Json::object();
  for (const auto& [node, meta] : victims) {
    Json pods = Json::array();
    for (const std::string& uid : meta.pod_uids) pods.push_back({{"UID", uid}});
    map[node] = {{"Pods", std::move(pods)}, {"NumPDBViolations", meta.num_pdb_violations}};
  }
  return Json{{"NodeNameToMetaVictims", std::move(map)}}.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace topofit::codec
