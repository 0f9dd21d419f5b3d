#include "mcp/tools.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "history/decisions_http.h"
#include "history/diagnosis.h"
#include "history/record_json.h"
#include "mcp/tool_parts.h"

namespace topofit::mcp {
namespace {

using nlohmann::json;

constexpr int kDefaultExplainLimit = 200;  // records read for an explanation
constexpr int kMaxExplainLimit = history::kMaxPageSize;
constexpr int kDefaultListLimit = 20;

json KindNames() {
  json names = json::array();
  for (int k = 0; k <= static_cast<int>(history::kLastKind); ++k) {
    names.push_back(std::string(history::KindName(static_cast<history::Kind>(k))));
  }
  return names;
}

json RecordsSchema() {
  return {{"type", "array"},
          {"description", "decision records, newest first (history/record.h): id, time, component, kind, reason, "
                          "correlationId, pods, node, nodeGroup, provisioningRequest, gpus, candidates (a filter's fitting nodes as "
                          "the first of them with their `count`), repeats (identical refusals folded into the one "
                          "before)"},
          {"items", {{"type", "object"}, {"required", json::array({"id", "time", "kind", "reason"})}}}};
}

json ExplanationSchema(const std::string& subject) {
  return {{"type", "object"},
          {"properties",
           {{subject, {{"type", "string"}}},
            {"text", {{"type", "string"}, {"description", "the story in plain language, newest first"}}},
            {"correlationId", {{"type", "string"}}},
            {"decisions", RecordsSchema()},
            {"truncated", {{"type", "boolean"}, {"description", "older records left out to stay under 256 KiB"}}}}},
          {"required", json::array({subject, "text", "decisions"})}};
}

json PageSchema() {
  return {{"type", "object"},
          {"properties",
           {{"decisions", RecordsSchema()},
            {"nextCursor", {{"type", "string"}, {"description", "pass as `cursor` for the next, older page"}}},
            {"truncated", {{"type", "boolean"}}}}},
          {"required", json::array({"decisions"})}};
}

absl::StatusOr<json> ListDecisions(const json& args, const history::PageSource& pages) {
  Arguments a(args, {"pod", "uid", "group", "node", "kind", "since", "limit", "cursor"});
  if (absl::Status known = a.CheckKnown(); !known.ok()) return known;
  // The same parameters, and the same checks, as GET /decisions.
  std::multimap<std::string, std::string> params;
  for (const char* name : {"pod", "uid", "group", "node", "kind", "since", "cursor"}) {
    absl::StatusOr<std::string> value = a.String(name, false);
    if (!value.ok()) return value.status();
    if (!value->empty()) params.emplace(name, *value);
  }
  absl::StatusOr<int64_t> limit = a.Integer("limit", 1, kMaxToolRecords, kDefaultListLimit);
  if (!limit.ok()) return limit.status();
  absl::StatusOr<history::DecisionQuery> query = history::ParseDecisionQuery(params);
  if (!query.ok()) return query.status();
  query->limit = static_cast<int>(*limit);
  return DecisionsPage(*query, pages);
}

absl::StatusOr<json> GetDecision(const json& args, const history::PageSource& pages) {
  Arguments a(args, {"id"});
  if (absl::Status known = a.CheckKnown(); !known.ok()) return known;
  absl::StatusOr<int64_t> id = a.Integer("id", 1, std::numeric_limits<int64_t>::max() - 1, 0, /*required=*/true);
  if (!id.ok()) return id.status();
  history::DecisionQuery query;
  query.before_id = *id + 1;
  query.limit = 1;
  absl::StatusOr<history::DecisionPage> page = pages(query);
  if (!page.ok()) return page.status();
  if (page->records.empty() || page->records.front().id != *id) {
    return absl::NotFoundError(absl::StrCat("no decision ", *id, " (evicted, or never recorded)"));
  }
  return json{{"decision", history::RecordToJson(page->records.front())}};
}

absl::StatusOr<json> ExplainTool(history::Subject subject, const std::string& argument, bool required, const json& args,
                                 const history::PageSource& pages) {
  Arguments a(args, {argument, "limit"});
  if (absl::Status known = a.CheckKnown(); !known.ok()) return known;
  absl::StatusOr<std::string> name = a.String(argument, required);
  if (!name.ok()) return name.status();
  if (required && name->empty()) return absl::InvalidArgumentError(absl::StrCat("'", argument, "' must not be empty"));
  if ((subject == history::Subject::kPod || subject == history::Subject::kRestart) &&
      std::count(name->begin(), name->end(), '/') != 1) {
    return absl::InvalidArgumentError(absl::StrCat("'pod' must be NAMESPACE/NAME, not '", *name, "'"));
  }
  absl::StatusOr<int64_t> limit = a.Integer("limit", 1, kMaxExplainLimit, kDefaultExplainLimit);
  if (!limit.ok()) return limit.status();
  return Explanation(subject, *name, static_cast<int>(*limit), pages);
}

// The pod's first cause (history/diagnosis.h), small by construction: a few hundred bytes of words whatever
// the records hold, so an agent can ask it of many pods.
absl::StatusOr<json> DiagnosePod(const json& args, const history::PageSource& pages) {
  Arguments a(args, {"pod"});
  if (absl::Status known = a.CheckKnown(); !known.ok()) return known;
  absl::StatusOr<std::string> pod = a.String("pod", true);
  if (!pod.ok()) return pod.status();
  if (std::count(pod->begin(), pod->end(), '/') != 1) {
    return absl::InvalidArgumentError(absl::StrCat("'pod' must be NAMESPACE/NAME, not '", *pod, "'"));
  }
  absl::StatusOr<history::Explanation> told = history::Explain(history::Subject::kPod, *pod, kDefaultExplainLimit, pages);
  if (!told.ok()) return told.status();
  const history::Diagnosis d = history::DiagnosePod(*pod, told->records, told->clock);
  json doc = {{"pod", *pod}, {"state", d.state}, {"cause", d.cause}, {"summary", d.summary}, {"evidence", d.evidence},
              {"more", d.state == "restarting" ? "explain_restart" : "explain_pending_pod"}};
  if (!d.correlation_id.empty()) doc["correlationId"] = d.correlation_id;
  if (d.since != absl::InfinitePast()) doc["since"] = history::FormatRecordTime(d.since, told->clock);
  return doc;
}

}  // namespace

json ToolDefinitions() {
  const json explain_limit = Limit(kMaxExplainLimit, kDefaultExplainLimit, "newest records read at most");
  return json::array({
      Tool("diagnose_pod", "Why is this GPU pod not running: the first cause",
           "One pod's state (pending, running, restarting, unknown) and the first cause, as a reason code with a "
           "sentence and up to three lines of evidence: the newest restart's cause (gpu-fault, oom, gpu-oom, "
           "eviction, image-or-config, liveness-probe, application-error, completed); for a pending pod the gang "
           "waiting (gang-no-room, gang-waiting), a hold topofit keeps (waiting-for-capacity, asking-for-capacity, "
           "held-for-scale-up), else the refusal most offered nodes gave (topology-unknown, node-size, min-link, "
           "min-bandwidth, gpu-count), invalid-pod, or a vetoed scale-up; no-record when topofit never judged it. "
           "Under 2 KB; `more` names the tool with the whole story.",
           ObjectSchema({{"pod", {{"type", "string"}, {"description", "NAMESPACE/NAME"}}}}, json::array({"pod"})),
           {{"type", "object"},
            {"properties",
             {{"pod", {{"type", "string"}}},
              {"state", {{"type", "string"}, {"enum", json::array({"pending", "running", "restarting", "unknown"})}}},
              {"cause", {{"type", "string"}, {"description", "a reason code, as the decision records carry"}}},
              {"summary", {{"type", "string"}}},
              {"evidence", {{"type", "array"}, {"items", {{"type", "string"}}}}},
              {"correlationId", {{"type", "string"}}},
              {"since", {{"type", "string"}, {"description", "when the newest record the cause stands on was made"}}},
              {"more", {{"type", "string"}, {"description", "the tool that tells the whole story"}}}}},
            {"required", json::array({"pod", "state", "cause", "summary", "evidence", "more"})}}),
      Tool("explain_pending_pod", "Why is this GPU pod pending (or where did it go)",
           "A pod's decision chain, newest first: each filter refusal with the best GPU set each node could give and "
           "why it fell short, the capacity topofit asked cluster-autoscaler for, the node group chosen for it and "
           "why the others lost, the GPUs held for it, and its bind. All records share the pod's correlation id.",
           ObjectSchema({{"pod", {{"type", "string"}, {"description", "NAMESPACE/NAME"}}}, {"limit", explain_limit}},
                        json::array({"pod"})),
           ExplanationSchema("pod")),
      Tool("explain_scale_up", "Why a node group grew or did not",
           "A node group's history, newest first: each expander ranking that chose it or passed it over (with every "
           "option's scores and what it lost on) and each intent (nodes asked, GPUs held for which pods).",
           ObjectSchema({{"group", {{"type", "string"}, {"description", "the node group as cluster-autoscaler names it"}}},
                         {"limit", explain_limit}},
                        json::array({"group"})),
           ExplanationSchema("group")),
      Tool("list_idle_gpus", "Why are these GPUs idle",
           "Free GPUs by why they are idle (fragmented: pending GPU pods fit none of their shapes; held-for-intent; "
           "awaiting-scale-down; booting; no-demand): each node's latest state, or one node's over time.",
           ObjectSchema({{"node", {{"type", "string"}, {"description", "a node: its idle GPUs over time"}}},
                         {"limit", explain_limit}},
                        json::array()),
           ExplanationSchema("idle")),
      Tool("explain_restart", "Why did this pod's containers restart",
           "A pod's container restarts, newest first, each with its diagnosed cause (gpu-fault, oom, gpu-oom, eviction, "
           "image-or-config, liveness-probe, application-error, completed) and the evidence: exit code, signal, "
           "termination reason and message, waiting reason, the pod's GPU ids, unhealthy GPUs and Xid codes, its "
           "Warning events and the previous container's log tail; and where topofit placed the pod (its bind).",
           ObjectSchema({{"pod", {{"type", "string"}, {"description", "NAMESPACE/NAME"}}}, {"limit", explain_limit}},
                        json::array({"pod"})),
           ExplanationSchema("restart")),
      Tool("explain_headroom", "Why warm capacity grew or shrank",
           "The headroom controller's changes, newest first: for each shape of warm capacity (GPUs, topology asked, "
           "node-group family) the replicas it keeps, and each change with why (headroom-grew, headroom-shrank): the "
           "target, the fill rate, the boot covered and the rises in demand it weighed (docs/headroom.md).",
           ObjectSchema({{"shape", {{"type", "string"}, {"description", "a shape's name, e.g. 4gpu-nv-required (default: every shape)"}}},
                         {"limit", explain_limit}},
                        json::array()),
           ExplanationSchema("headroom")),
      Tool("list_decisions", "Query the decision history",
           "Decision records, newest first, narrowed by every filter given; page with `cursor` (the previous answer's "
           "nextCursor).",
           ObjectSchema({{"pod", {{"type", "string"}, {"description", "NAMESPACE/NAME"}}},
                         {"uid", {{"type", "string"}, {"description", "a pod uid: its correlation id"}}},
                         {"group", {{"type", "string"}}},
                         {"node", {{"type", "string"}}},
                         {"kind", {{"type", "string"}, {"enum", KindNames()}}},
                         {"since", {{"type", "string"}, {"format", "date-time"}, {"description", "RFC 3339"}}},
                         {"limit", Limit(kMaxToolRecords, kDefaultListLimit, "records at most")},
                         {"cursor", {{"type", "string"}}}},
                        json::array()),
           PageSchema()),
      Tool("get_decision", "One decision record",
           "One decision record by its id (the `id` of a record another tool returned).",
           ObjectSchema({{"id", {{"type", "integer"}, {"minimum", 1}}}}, json::array({"id"})),
           {{"type", "object"},
            {"properties", {{"decision", {{"type", "object"}}}}},
            {"required", json::array({"decision"})}}),
  });
}

bool IsTool(const std::string& name) {
  for (const json& tool : ToolDefinitions()) {
    if (tool["name"] == name) return true;
  }
  return false;
}

absl::StatusOr<json> DecisionsPage(history::DecisionQuery query, const history::PageSource& pages) {
  absl::StatusOr<history::DecisionPage> page = pages(query);
  if (!page.ok()) return page.status();
  json doc = history::DecisionPageToJson(*page);
  if (CapBytes(doc, "decisions")) {
    // The next page starts after the last record kept.
    doc["nextCursor"] = std::to_string(doc["decisions"].empty() ? query.before_id
                                                                : doc["decisions"].back()["id"].get<int64_t>());
  }
  return doc;
}

absl::StatusOr<json> Explanation(history::Subject subject, const std::string& name, int limit,
                                 const history::PageSource& pages) {
  absl::StatusOr<history::Explanation> told = history::Explain(subject, name, limit, pages);
  if (!told.ok()) return told.status();
  json doc = history::ExplanationToJson(subject, name, *told);
  doc["text"] = told->records.empty() ? "nothing recorded" : told->text;
  CapBytes(doc, "decisions");
  return doc;
}

json CallTool(const std::string& name, const json& arguments, const history::PageSource& pages) {
  absl::StatusOr<json> out = absl::InternalError("no such tool");
  if (name == "diagnose_pod") out = DiagnosePod(arguments, pages);
  if (name == "explain_pending_pod") out = ExplainTool(history::Subject::kPod, "pod", true, arguments, pages);
  if (name == "explain_scale_up") out = ExplainTool(history::Subject::kGroup, "group", true, arguments, pages);
  if (name == "list_idle_gpus") out = ExplainTool(history::Subject::kIdle, "node", false, arguments, pages);
  if (name == "explain_restart") out = ExplainTool(history::Subject::kRestart, "pod", true, arguments, pages);
  if (name == "explain_headroom") out = ExplainTool(history::Subject::kHeadroom, "shape", false, arguments, pages);
  if (name == "list_decisions") out = ListDecisions(arguments, pages);
  if (name == "get_decision") out = GetDecision(arguments, pages);
  if (!out.ok()) return ToolError(out.status().message());
  return ToolResult(*std::move(out));
}

}  // namespace topofit::mcp
