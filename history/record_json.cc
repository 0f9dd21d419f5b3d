#include "history/record_json.h"

#include "absl/strings/str_cat.h"
#include "codec/json_string.h"

namespace topofit::history {
namespace {

using nlohmann::json;

constexpr char kTimeFormat[] = "%Y-%m-%dT%H:%M:%E6SZ";

template <typename T>
void SetIfNonZero(json& out, const char* key, const T& value) {
  if (value != T{}) out[key] = value;
}

template <typename T>
absl::Status Read(const json& in, const char* key, T& value) {
  auto it = in.find(key);
  if (it == in.end()) return absl::OkStatus();
  try {
    value = it->get<T>();
  } catch (const json::exception&) {
    return absl::InvalidArgumentError(absl::StrCat("'", key, "' has the wrong type"));
  }
  return absl::OkStatus();
}

// Reads every field, stopping at the first that fails.
#define HISTORY_READ(in, key, value)                                       \
  if (absl::Status read = Read(in, key, value); !read.ok()) return read;

absl::StatusOr<Candidate> CandidateFromJson(const json& in) {
  if (!in.is_object()) return absl::InvalidArgumentError("a candidate is not an object");
  Candidate c;
  std::string reason = "fits";
  HISTORY_READ(in, "name", c.name);
  HISTORY_READ(in, "reason", reason);
  absl::StatusOr<Reason> parsed = ParseReason(reason);
  if (!parsed.ok()) return parsed.status();
  c.reason = *parsed;
  HISTORY_READ(in, "unresolvable", c.unresolvable);
  HISTORY_READ(in, "requested", c.requested);
  HISTORY_READ(in, "available", c.available);
  HISTORY_READ(in, "freeGpus", c.free_gpus);
  HISTORY_READ(in, "heldGpus", c.held_gpus);
  HISTORY_READ(in, "preferencesSatisfied", c.preferences_satisfied);
  HISTORY_READ(in, "qualityPerMille", c.quality_per_mille);
  HISTORY_READ(in, "idleGpus", c.idle_gpus);
  HISTORY_READ(in, "price", c.price);
  HISTORY_READ(in, "count", c.count);
  if (auto topology = in.find("topology"); topology != in.end()) {
    if (!topology->is_object()) return absl::InvalidArgumentError("'topology' is not an object");
    TopologyDetail& detail = c.topology.emplace();
    HISTORY_READ(*topology, "gpuIds", detail.gpu_ids);
    HISTORY_READ(*topology, "weakestLink", detail.weakest_link);
    HISTORY_READ(*topology, "bandwidthMBps", detail.bandwidth_mbps);
  }
  return c;
}

}  // namespace

std::string FormatRecordTime(absl::Time time) { return absl::FormatTime(kTimeFormat, time, absl::UTCTimeZone()); }

absl::StatusOr<absl::Time> ParseRecordTime(const std::string& text) {
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &time, &error)) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not an RFC 3339 time: ", error));
  }
  return time;
}

std::string CandidatesJson(const std::vector<Candidate>& candidates) {
  // Each candidate's keys in the order nlohmann's dump() sorts them, so the text is what the DOM this
  // replaced wrote; zeros (and a count of one) left out.
  std::string out = "[";
  for (const Candidate& c : candidates) {
    if (out.size() > 1) out += ',';
    char separator = '{';
    const auto key = [&](absl::string_view name) {
      absl::StrAppend(&out, absl::string_view(&separator, 1), "\"", name, "\":");
      separator = ',';
    };
    const auto number = [&](absl::string_view name, auto value, decltype(value) omitted) {
      if (value == omitted) return;
      key(name);
      absl::StrAppend(&out, value);
    };
    number("available", c.available, 0);
    number("count", c.count, 1);
    number("freeGpus", c.free_gpus, 0);
    number("heldGpus", c.held_gpus, 0);
    number("idleGpus", c.idle_gpus, 0);
    key("name");
    codec::AppendJsonString(out, c.name);
    number("preferencesSatisfied", c.preferences_satisfied, 0);
    if (c.price != 0) {
      key("price");
      out += json(c.price).dump();  // the shortest text that reads back as the same double
    }
    number("qualityPerMille", c.quality_per_mille, 0);
    key("reason");
    codec::AppendJsonString(out, ReasonName(c.reason));
    number("requested", c.requested, 0);
    if (c.topology) {
      key("topology");
      absl::StrAppend(&out, "{\"bandwidthMBps\":", c.topology->bandwidth_mbps, ",\"gpuIds\":");
      codec::AppendJsonString(out, c.topology->gpu_ids);
      out += ",\"weakestLink\":";
      codec::AppendJsonString(out, c.topology->weakest_link);
      out += '}';
    }
    if (c.unresolvable) {
      key("unresolvable");
      out += "true";
    }
    out += '}';
  }
  out += ']';
  return out;
}

absl::StatusOr<std::vector<Candidate>> CandidatesFromJson(const json& in) {
  if (!in.is_array()) return absl::InvalidArgumentError("'candidates' is not an array");
  std::vector<Candidate> out;
  out.reserve(in.size());
  for (const json& c : in) {
    absl::StatusOr<Candidate> candidate = CandidateFromJson(c);
    if (!candidate.ok()) return candidate.status();
    out.push_back(*std::move(candidate));
  }
  return out;
}

json RecordToJson(const Record& r) {
  json out = {{"id", r.id},
              {"time", FormatRecordTime(r.time)},
              {"component", ComponentName(r.component)},
              {"kind", KindName(r.kind)},
              {"reason", ReasonName(r.reason)}};
  SetIfNonZero(out, "correlationId", r.correlation_id);
  if (!r.pods.empty()) {
    json pods = json::array();
    for (const PodSubject& pod : r.pods) pods.push_back({{"uid", pod.uid}, {"pod", pod.key}});
    out["pods"] = std::move(pods);
  }
  SetIfNonZero(out, "node", r.node);
  SetIfNonZero(out, "nodeGroup", r.node_group);
  SetIfNonZero(out, "provisioningRequest", r.provisioning_request);
  SetIfNonZero(out, "gpus", r.gpus);
  if (!r.candidates.empty()) out["candidates"] = json::parse(CandidatesJson(r.candidates));
  SetIfNonZero(out, "repeats", r.repeats);
  return out;
}

absl::StatusOr<Record> RecordFromJson(const json& in) {
  if (!in.is_object()) return absl::InvalidArgumentError("a decision is not an object");
  Record r;
  std::string time, component, kind, reason;
  HISTORY_READ(in, "id", r.id);
  HISTORY_READ(in, "time", time);
  HISTORY_READ(in, "component", component);
  HISTORY_READ(in, "kind", kind);
  HISTORY_READ(in, "reason", reason);
  absl::StatusOr<absl::Time> parsed_time = ParseRecordTime(time);
  if (!parsed_time.ok()) return parsed_time.status();
  absl::StatusOr<Component> parsed_component = ParseComponent(component);
  if (!parsed_component.ok()) return parsed_component.status();
  absl::StatusOr<Kind> parsed_kind = ParseKind(kind);
  if (!parsed_kind.ok()) return parsed_kind.status();
  absl::StatusOr<Reason> parsed_reason = ParseReason(reason);
  if (!parsed_reason.ok()) return parsed_reason.status();
  r.time = *parsed_time;
  r.component = *parsed_component;
  r.kind = *parsed_kind;
  r.reason = *parsed_reason;
  HISTORY_READ(in, "correlationId", r.correlation_id);
  if (auto pods = in.find("pods"); pods != in.end()) {
    if (!pods->is_array()) return absl::InvalidArgumentError("'pods' is not an array");
    for (const json& pod : *pods) {
      if (!pod.is_object()) return absl::InvalidArgumentError("a pod is not an object");
      PodSubject& subject = r.pods.emplace_back();
      HISTORY_READ(pod, "uid", subject.uid);
      HISTORY_READ(pod, "pod", subject.key);
    }
  }
  HISTORY_READ(in, "node", r.node);
  HISTORY_READ(in, "nodeGroup", r.node_group);
  HISTORY_READ(in, "provisioningRequest", r.provisioning_request);
  HISTORY_READ(in, "gpus", r.gpus);
  HISTORY_READ(in, "repeats", r.repeats);
  if (auto candidates = in.find("candidates"); candidates != in.end()) {
    absl::StatusOr<std::vector<Candidate>> parsed = CandidatesFromJson(*candidates);
    if (!parsed.ok()) return parsed.status();
    r.candidates = *std::move(parsed);
  }
  return r;
}

}  // namespace topofit::history
