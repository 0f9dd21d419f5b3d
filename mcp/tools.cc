#include "mcp/tools.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "history/decisions_http.h"
#include "history/record_json.h"

namespace topofit::mcp {
namespace {

using nlohmann::json;

constexpr int kDefaultExplainLimit = 200;  // records read for an explanation
constexpr int kMaxExplainLimit = history::kMaxPageSize;
constexpr int kDefaultListLimit = 20;

json KindNames() {
  json names = json::array();
  for (int k = 0;; ++k) {
    if (static_cast<history::Kind>(k) > history::Kind::kIdle) break;
    names.push_back(std::string(history::KindName(static_cast<history::Kind>(k))));
  }
  return names;
}

json Limit(int max, int default_value, absl::string_view what) {
  return {{"type", "integer"}, {"minimum", 1}, {"maximum", max}, {"default", default_value},
          {"description", absl::StrCat(what, " (1..", max, ", default ", default_value, ")")}};
}

json ObjectSchema(json properties, json required) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)},
          {"additionalProperties", false}};
}

json RecordsSchema() {
  return {{"type", "array"},
          {"description", "decision records, newest first (history/record.h): id, time, component, kind, reason, "
                          "correlationId, pods, node, nodeGroup, provisioningRequest, gpus, candidates"},
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

json Tool(const std::string& name, const std::string& title, const std::string& description, json input, json output) {
  return {{"name", name},
          {"title", title},
          {"description", description},
          {"inputSchema", std::move(input)},
          {"outputSchema", std::move(output)},
          {"annotations",
           {{"title", title}, {"readOnlyHint", true}, {"destructiveHint", false}, {"idempotentHint", true},
            {"openWorldHint", false}}}};
}

// The arguments a tool got, checked against its input schema by hand (the schemas are small and fixed).
class Arguments {
 public:
  Arguments(const json& args, std::vector<std::string> known) : args_(args), known_(std::move(known)) {}

  absl::Status CheckKnown() const {
    if (!args_.is_object()) return absl::InvalidArgumentError("arguments must be an object");
    for (const auto& [key, value] : args_.items()) {
      if (std::find(known_.begin(), known_.end(), key) == known_.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown argument '", key, "' (", absl::StrJoin(known_, ", "), ")"));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> String(const std::string& name, bool required) const {
    auto it = args_.find(name);
    if (it == args_.end()) {
      if (required) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is required"));
      return std::string();
    }
    if (!it->is_string()) return absl::InvalidArgumentError(absl::StrCat("'", name, "' must be a string"));
    return it->get<std::string>();
  }

  absl::StatusOr<int64_t> Integer(const std::string& name, int64_t min, int64_t max, int64_t default_value,
                                  bool required = false) const {
    auto it = args_.find(name);
    if (it == args_.end()) {
      if (required) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is required"));
      return default_value;
    }
    // A float with an integral value (3.0) is an integer in JSON Schema; 1e300 and 2.5 are not in range.
    std::optional<int64_t> value;
    if (it->is_number_integer() && !it->is_number_unsigned()) value = it->get<int64_t>();
    if (it->is_number_unsigned() && it->get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      value = static_cast<int64_t>(it->get<uint64_t>());
    }
    if (it->is_number_float()) {
      const double d = it->get<double>();
      if (d >= static_cast<double>(min) && d <= static_cast<double>(max) && d == static_cast<double>(static_cast<int64_t>(d))) {
        value = static_cast<int64_t>(d);
      }
    }
    if (!it->is_number()) return absl::InvalidArgumentError(absl::StrCat("'", name, "' must be an integer"));
    if (!value || *value < min || *value > max) {
      return absl::InvalidArgumentError(absl::StrCat("'", name, "' must be an integer in ", min, "..", max));
    }
    return *value;
  }

 private:
  const json& args_;
  std::vector<std::string> known_;
};

// Keeps the newest records of doc["decisions"] that fit in kMaxToolBytes with the rest of `doc`; says
// whether some were left out.
bool CapBytes(json& doc) {
  json& decisions = doc["decisions"];
  json rest = doc;
  rest["decisions"] = json::array();
  size_t total = rest.dump(-1, ' ', false, json::error_handler_t::replace).size() + 32;  // room for "truncated" and a cursor
  size_t kept = 0;
  for (; kept < decisions.size(); ++kept) {
    total += decisions[kept].dump(-1, ' ', false, json::error_handler_t::replace).size() + 1;
    if (total > kMaxToolBytes) break;
  }
  if (kept == decisions.size()) return false;
  decisions.erase(decisions.begin() + static_cast<std::ptrdiff_t>(kept), decisions.end());
  doc["truncated"] = true;
  return true;
}

json ToolError(absl::string_view message) {
  return {{"content", json::array({{{"type", "text"}, {"text", std::string(message)}}})}, {"isError", true}};
}

json ToolResult(json structured) {
  return {{"content", json::array({{{"type", "text"}, {"text", structured.dump(-1, ' ', false, json::error_handler_t::replace)}}})},
          {"structuredContent", std::move(structured)}};
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
  if (subject == history::Subject::kPod && std::count(name->begin(), name->end(), '/') != 1) {
    return absl::InvalidArgumentError(absl::StrCat("'pod' must be NAMESPACE/NAME, not '", *name, "'"));
  }
  absl::StatusOr<int64_t> limit = a.Integer("limit", 1, kMaxExplainLimit, kDefaultExplainLimit);
  if (!limit.ok()) return limit.status();
  return Explanation(subject, *name, static_cast<int>(*limit), pages);
}

}  // namespace

json ToolDefinitions() {
  const json explain_limit = Limit(kMaxExplainLimit, kDefaultExplainLimit, "newest records read at most");
  return json::array({
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
  if (CapBytes(doc)) {
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
  CapBytes(doc);
  return doc;
}

json CallTool(const std::string& name, const json& arguments, const history::PageSource& pages) {
  absl::StatusOr<json> out = absl::InternalError("no such tool");
  if (name == "explain_pending_pod") out = ExplainTool(history::Subject::kPod, "pod", true, arguments, pages);
  if (name == "explain_scale_up") out = ExplainTool(history::Subject::kGroup, "group", true, arguments, pages);
  if (name == "list_idle_gpus") out = ExplainTool(history::Subject::kIdle, "node", false, arguments, pages);
  if (name == "list_decisions") out = ListDecisions(arguments, pages);
  if (name == "get_decision") out = GetDecision(arguments, pages);
  if (!out.ok()) return ToolError(out.status().message());
  return ToolResult(*std::move(out));
}

}  // namespace topofit::mcp
