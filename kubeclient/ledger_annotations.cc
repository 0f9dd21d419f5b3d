#include "kubeclient/ledger_annotations.h"

#include <limits>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "codec/bounded_json.h"
#include "kube/topofit_annotations.h"
#include "decision/pod_demand.h"
#include "decision/preference.h"

namespace topofit::kubeclient {
namespace {

using Json = nlohmann::json;

// An annotation is a string of a pod, JSON of its own that the pod's parse did not bound.
absl::StatusOr<Json> ParseObject(absl::string_view text) {
  absl::StatusOr<Json> json = codec::ParseBoundedJson(text, codec::kObjectJsonLimits, "annotation");
  if (!json.ok()) return json.status();
  if (!json->is_object()) return absl::InvalidArgumentError("not a JSON object");
  return json;
}

absl::StatusOr<absl::Time> TimeField(const Json& json, const char* key) {
  const auto it = json.find(key);
  if (it == json.end() || !it->is_string()) return absl::InvalidArgumentError(absl::StrCat(key, ": want a string"));
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, it->get<std::string>(), &time, &error)) {
    return absl::InvalidArgumentError(absl::StrCat(key, ": not an RFC 3339 time: ", error));
  }
  return time;
}

absl::StatusOr<std::string> StringField(const Json& json, const char* key) {
  const auto it = json.find(key);
  if (it == json.end() || !it->is_string() || it->get<std::string>().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(key, ": want a non-empty string"));
  }
  return it->get<std::string>();
}

// An optional array of strings, or object of string values: absent is empty.
template <typename T>
absl::StatusOr<T> StringsField(const Json& json, const char* key, Json::value_t shape) {
  T out;
  const auto it = json.find(key);
  if (it == json.end()) return out;
  if (it->type() != shape) return absl::InvalidArgumentError(absl::StrCat(key, ": wrong type"));
  for (const Json& value : *it) {
    if (!value.is_string()) return absl::InvalidArgumentError(absl::StrCat(key, ": want strings"));
  }
  return it->get<T>();
}

}  // namespace

std::string LedgerTimeText(absl::Time t) { return absl::FormatTime("%Y-%m-%d%ET%H:%M:%E*SZ", t, absl::UTCTimeZone()); }

std::string PreferenceAnnotationJson(const PreferenceAnnotation& annotation) {
  return Json{{"refusedNodes", annotation.refused_nodes},
              {"firstSeen", LedgerTimeText(annotation.first_seen)},
              {"lastSeen", LedgerTimeText(annotation.last_seen)}}
      .dump();
}

absl::StatusOr<PreferenceAnnotation> ParsePreferenceAnnotation(absl::string_view text) {
  absl::StatusOr<Json> json = ParseObject(text);
  if (!json.ok()) return json.status();
  PreferenceAnnotation out;
  absl::StatusOr<std::vector<std::string>> refused =
      StringsField<std::vector<std::string>>(*json, "refusedNodes", Json::value_t::array);
  if (!refused.ok()) return refused.status();
  out.refused_nodes = *std::move(refused);
  absl::StatusOr<absl::Time> first_seen = TimeField(*json, "firstSeen");
  if (!first_seen.ok()) return first_seen.status();
  absl::StatusOr<absl::Time> last_seen = TimeField(*json, "lastSeen");
  if (!last_seen.ok()) return last_seen.status();
  out.first_seen = *first_seen;
  out.last_seen = *last_seen;
  return out;
}

std::string IntentAnnotationJson(const IntentAnnotation& annotation) {
  Json json{{"nodeGroup", annotation.node_group},
            {"nodeCount", annotation.node_count},
            {"nodeLabels", annotation.node_labels},
            {"recorded", LedgerTimeText(annotation.recorded)}};
  if (annotation.held_gpus) json["heldGpus"] = *annotation.held_gpus;
  return json.dump();
}

absl::StatusOr<IntentAnnotation> ParseIntentAnnotation(absl::string_view text) {
  absl::StatusOr<Json> json = ParseObject(text);
  if (!json.ok()) return json.status();
  IntentAnnotation out;
  absl::StatusOr<std::string> group = StringField(*json, "nodeGroup");
  if (!group.ok()) return group.status();
  out.node_group = *std::move(group);
  const auto count = json->find("nodeCount");
  if (count == json->end() || !count->is_number_integer() || count->get<int64_t>() < 0 ||
      count->get<int64_t>() > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError("nodeCount: want an integer >= 0");
  }
  out.node_count = count->get<int>();
  absl::StatusOr<kube::StringMap> labels = StringsField<kube::StringMap>(*json, "nodeLabels", Json::value_t::object);
  if (!labels.ok()) return labels.status();
  out.node_labels = *std::move(labels);
  absl::StatusOr<absl::Time> recorded = TimeField(*json, "recorded");
  if (!recorded.ok()) return recorded.status();
  out.recorded = *recorded;
  if (const auto held = json->find("heldGpus"); held != json->end()) {
    if (!held->is_number_integer() || held->get<int64_t>() < 0 || held->get<int64_t>() > 1024) {
      return absl::InvalidArgumentError("heldGpus: want an integer 0..1024");
    }
    out.held_gpus = held->get<int>();
  }
  return out;
}

PreferenceAnnotation PreferenceAnnotationOf(const decision::Preference& preference) {
  return PreferenceAnnotation{preference.refused_nodes, preference.first_seen, preference.last_seen};
}

IntentAnnotation IntentAnnotationOf(const decision::Intent& intent, const std::string& uid) {
  IntentAnnotation annotation{intent.node_group, intent.node_count, intent.node_labels, intent.recorded, std::nullopt};
  if (auto held = intent.pod_gpus.find(uid); held != intent.pod_gpus.end()) annotation.held_gpus = held->second;
  return annotation;
}

absl::StatusOr<std::optional<decision::Preference>> PreferenceOfPod(const kube::Pod& pod) {
  const auto it = pod.metadata.annotations.find(kube::kPlacementPreferenceAnnotation);
  if (it == pod.metadata.annotations.end()) return std::nullopt;
  absl::StatusOr<PreferenceAnnotation> annotation = ParsePreferenceAnnotation(it->second);
  if (!annotation.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(kube::kPlacementPreferenceAnnotation, ": ", annotation.status().message()));
  }
  absl::StatusOr<decision::GpuDemand> demand = decision::DemandOf(pod);
  if (!demand.ok()) return demand.status();
  decision::Preference preference = decision::PreferenceFor(pod, *demand, std::move(annotation->refused_nodes));
  preference.first_seen = annotation->first_seen;
  preference.last_seen = annotation->last_seen;
  return preference;
}

absl::StatusOr<std::optional<IntentAnnotation>> IntentOfPod(const kube::Pod& pod) {
  const auto it = pod.metadata.annotations.find(kube::kScaleUpIntentAnnotation);
  if (it == pod.metadata.annotations.end()) return std::nullopt;
  absl::StatusOr<IntentAnnotation> annotation = ParseIntentAnnotation(it->second);
  if (!annotation.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(kube::kScaleUpIntentAnnotation, ": ", annotation.status().message()));
  }
  return *std::move(annotation);
}

}  // namespace topofit::kubeclient
