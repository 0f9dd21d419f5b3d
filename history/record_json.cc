#include "history/record_json.h"

#include <type_traits>

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
  if (auto held_until = in.find("heldUntil"); held_until != in.end()) {
    if (!held_until->is_string()) return absl::InvalidArgumentError("'heldUntil' is not a string");
    absl::StatusOr<absl::Time> time = ParseRecordTime(held_until->get<std::string>());
    if (!time.ok()) return time.status();
    c.held_until = *time;
  }
  HISTORY_READ(in, "preferencesSatisfied", c.preferences_satisfied);
  HISTORY_READ(in, "qualityPerMille", c.quality_per_mille);
  HISTORY_READ(in, "idleGpus", c.idle_gpus);
  HISTORY_READ(in, "price", c.price);
  HISTORY_READ(in, "count", c.count);
  if (auto topology = in.find("topology"); topology != in.end()) {
    if (!topology->is_object()) return absl::InvalidArgumentError("'topology' is not an object");
    TopologyDetail& detail = c.topology.emplace();
    HISTORY_READ(*topology, "assumed", detail.assumed);
    HISTORY_READ(*topology, "gpuIds", detail.gpu_ids);
    HISTORY_READ(*topology, "weakestLink", detail.weakest_link);
    HISTORY_READ(*topology, "bandwidthMBps", detail.bandwidth_mbps);
  }
  return c;
}

// The one description of a candidate's JSON, for the database's text and the read path's DOM alike: its
// keys in the order nlohmann's dump() sorts an object's (so the text is what a dumped DOM of the same
// fields is), zeros and a count of one left out. `out` takes Field(key, value), and Open(key) ... Close()
// around a nested object.
template <typename Writer>
void WriteCandidate(const Candidate& c, Writer& out) {
  if (c.available != 0) out.Field("available", c.available);
  if (c.count != 1) out.Field("count", c.count);
  if (c.free_gpus != 0) out.Field("freeGpus", c.free_gpus);
  if (c.held_gpus != 0) out.Field("heldGpus", c.held_gpus);
  if (c.held_until) out.Field("heldUntil", FormatRecordTime(*c.held_until));
  if (c.idle_gpus != 0) out.Field("idleGpus", c.idle_gpus);
  out.Field("name", c.name);
  if (c.preferences_satisfied != 0) out.Field("preferencesSatisfied", c.preferences_satisfied);
  if (c.price != 0) out.Field("price", c.price);
  if (c.quality_per_mille != 0) out.Field("qualityPerMille", c.quality_per_mille);
  out.Field("reason", ReasonName(c.reason));
  if (c.requested != 0) out.Field("requested", c.requested);
  if (c.topology) {
    out.Open("topology");
    if (c.topology->assumed) out.Field("assumed", true);
    out.Field("bandwidthMBps", c.topology->bandwidth_mbps);
    out.Field("gpuIds", c.topology->gpu_ids);
    out.Field("weakestLink", c.topology->weakest_link);
    out.Close();
  }
  if (c.unresolvable) out.Field("unresolvable", true);
}

// Appends an object's members as JSON text, for the candidates column: the writer thread makes no DOM
// per record.
class CandidateText {
 public:
  explicit CandidateText(std::string& out) : out_(out) {}
  void Open(const char* key) {
    Key(key);
    out_ += '{';
    first_ = true;
  }
  void Close() {
    out_ += '}';
    first_ = false;
  }
  template <typename T>
  void Field(const char* key, const T& value) {
    Key(key);
    if constexpr (std::is_same_v<T, bool>) {
      out_ += value ? "true" : "false";
    } else if constexpr (std::is_integral_v<T>) {
      absl::StrAppend(&out_, value);
    } else if constexpr (std::is_floating_point_v<T>) {
      out_ += json(value).dump();  // the shortest text that reads back as the same double
    } else {
      codec::AppendJsonString(out_, value);
    }
  }

 private:
  void Key(const char* key) {
    if (!first_) out_ += ',';
    first_ = false;
    absl::StrAppend(&out_, "\"", key, "\":");
  }

  std::string& out_;
  bool first_ = true;
};

// Sets an object's members in a DOM, for the records GET /decisions, explain and MCP serve: built once,
// not written as text and parsed back.
class CandidateDom {
 public:
  explicit CandidateDom(json& out) : object_(&out) {}
  void Open(const char* key) {
    outer_ = object_;
    object_ = &(*object_)[key];
  }
  void Close() { object_ = outer_; }
  template <typename T>
  void Field(const char* key, const T& value) {
    if constexpr (std::is_same_v<T, absl::string_view>) {
      (*object_)[key] = std::string(value);
    } else {
      (*object_)[key] = value;
    }
  }

 private:
  json* object_;
  json* outer_ = nullptr;
};

json CandidatesDom(const std::vector<Candidate>& candidates) {
  json out = json::array();
  for (const Candidate& c : candidates) {
    CandidateDom dom(out.emplace_back(json::object()));
    WriteCandidate(c, dom);
  }
  return out;
}

}  // namespace

std::string FormatRecordTime(absl::Time time) { return absl::FormatTime(kTimeFormat, time, absl::UTCTimeZone()); }

std::string FormatRecordTime(absl::Time time, RecordClock clock) {
  if (clock == RecordClock::kWall) return FormatRecordTime(time);
  return absl::StrCat("replay +", absl::FormatDuration(absl::Trunc(time - absl::UnixEpoch(), absl::Milliseconds(1))));
}

absl::StatusOr<absl::Time> ParseRecordTime(const std::string& text) {
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &time, &error)) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not an RFC 3339 time: ", error));
  }
  return time;
}

std::string CandidatesJson(const std::vector<Candidate>& candidates) {
  std::string out = "[";
  for (const Candidate& c : candidates) {
    if (out.size() > 1) out += ',';
    out += '{';
    CandidateText text(out);
    WriteCandidate(c, text);
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

json RestartDetailToJson(const RestartDetail& d) {
  json out = {{"container", d.container}, {"restartCount", d.restart_count}, {"exitCode", d.exit_code}};
  SetIfNonZero(out, "signal", d.signal);
  SetIfNonZero(out, "terminationReason", d.termination_reason);
  SetIfNonZero(out, "terminationMessage", d.termination_message);
  SetIfNonZero(out, "waitingReason", d.waiting_reason);
  SetIfNonZero(out, "diagnosis", d.diagnosis);
  SetIfNonZero(out, "warnings", d.warnings);
  SetIfNonZero(out, "logTail", d.log_tail);
  SetIfNonZero(out, "gpuIds", d.gpu_ids);
  SetIfNonZero(out, "unhealthyGpus", d.unhealthy_gpus);
  SetIfNonZero(out, "xids", d.xids);
  SetIfNonZero(out, "nodeConditions", d.node_conditions);
  SetIfNonZero(out, "nodeWarnings", d.node_warnings);
  return out;
}

absl::StatusOr<RestartDetail> RestartDetailFromJson(const json& in) {
  if (!in.is_object()) return absl::InvalidArgumentError("a restart's detail is not an object");
  RestartDetail d;
  HISTORY_READ(in, "container", d.container);
  HISTORY_READ(in, "restartCount", d.restart_count);
  HISTORY_READ(in, "exitCode", d.exit_code);
  HISTORY_READ(in, "signal", d.signal);
  HISTORY_READ(in, "terminationReason", d.termination_reason);
  HISTORY_READ(in, "terminationMessage", d.termination_message);
  HISTORY_READ(in, "waitingReason", d.waiting_reason);
  HISTORY_READ(in, "diagnosis", d.diagnosis);
  HISTORY_READ(in, "warnings", d.warnings);
  HISTORY_READ(in, "logTail", d.log_tail);
  HISTORY_READ(in, "gpuIds", d.gpu_ids);
  HISTORY_READ(in, "unhealthyGpus", d.unhealthy_gpus);
  HISTORY_READ(in, "xids", d.xids);
  HISTORY_READ(in, "nodeConditions", d.node_conditions);
  HISTORY_READ(in, "nodeWarnings", d.node_warnings);
  return d;
}

json HeadroomDetailToJson(const HeadroomDetail& d) {
  return {{"shape", d.shape},         {"replicas", d.replicas},        {"was", d.was},
          {"target", d.target},       {"fillRate", d.fill_rate},       {"bootSeconds", d.boot_seconds},
          {"rises", d.rises},         {"largestRise", d.largest_rise}, {"mechanism", d.mechanism}};
}

absl::StatusOr<HeadroomDetail> HeadroomDetailFromJson(const json& in) {
  if (!in.is_object()) return absl::InvalidArgumentError("a headroom change's detail is not an object");
  HeadroomDetail d;
  HISTORY_READ(in, "shape", d.shape);
  HISTORY_READ(in, "replicas", d.replicas);
  HISTORY_READ(in, "was", d.was);
  HISTORY_READ(in, "target", d.target);
  HISTORY_READ(in, "fillRate", d.fill_rate);
  HISTORY_READ(in, "bootSeconds", d.boot_seconds);
  HISTORY_READ(in, "rises", d.rises);
  HISTORY_READ(in, "largestRise", d.largest_rise);
  HISTORY_READ(in, "mechanism", d.mechanism);
  return d;
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
  if (!r.candidates.empty()) out["candidates"] = CandidatesDom(r.candidates);
  SetIfNonZero(out, "repeats", r.repeats);
  SetIfNonZero(out, "gang", r.gang);
  if (r.restart) out["restart"] = RestartDetailToJson(*r.restart);
  if (r.headroom) out["headroom"] = HeadroomDetailToJson(*r.headroom);
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
  HISTORY_READ(in, "gang", r.gang);
  if (auto candidates = in.find("candidates"); candidates != in.end()) {
    absl::StatusOr<std::vector<Candidate>> parsed = CandidatesFromJson(*candidates);
    if (!parsed.ok()) return parsed.status();
    r.candidates = *std::move(parsed);
  }
  if (auto restart = in.find("restart"); restart != in.end()) {
    absl::StatusOr<RestartDetail> parsed = RestartDetailFromJson(*restart);
    if (!parsed.ok()) return parsed.status();
    r.restart = *std::move(parsed);
  }
  if (auto headroom = in.find("headroom"); headroom != in.end()) {
    absl::StatusOr<HeadroomDetail> parsed = HeadroomDetailFromJson(*headroom);
    if (!parsed.ok()) return parsed.status();
    r.headroom = *std::move(parsed);
  }
  return r;
}

}  // namespace topofit::history
