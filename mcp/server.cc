#include "mcp/server.h"

#include <algorithm>
#include <exception>
#include <iterator>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "mcp/modern_result.h"
#include "mcp/request_meta.h"
#include "mcp/tools.h"

namespace topofit::mcp {
namespace {

using nlohmann::json;

constexpr absl::string_view kDecisionsUri = "topofit://decisions";
constexpr absl::string_view kIdleGpusUri = "topofit://idle-gpus";
constexpr absl::string_view kDecisionPrefix = "topofit://decisions/";
constexpr absl::string_view kPodPrefix = "topofit://pods/";
constexpr absl::string_view kTopologyNodePrefix = "topofit://topology/node/";
constexpr absl::string_view kTopologyGroupPrefix = "topofit://topology/group/";
constexpr int kResourceTopologyNodes = 20;  // a group's first nodes
constexpr int kResourceDecisions = 50;

constexpr absl::string_view kInstructions =
    "Read-only context from topofit, the GPU-topology-aware scheduler extender and cluster-autoscaler expander: "
    "a GPU pod's first cause in one short answer (diagnose_pod), "
    "why a GPU pod is pending (explain_pending_pod), why a node group grew or not (explain_scale_up), why GPUs "
    "are idle (list_idle_gpus), why a pod's containers restarted (explain_restart), and the raw decision records "
    "(list_decisions, get_decision). Reason codes are a closed set: min-link/min-bandwidth (topology), gpu-count, "
    "node-size, held-for-scale-up, waiting-for-capacity, asking-for-capacity, group-would-strand, fragmented, "
    "held-for-intent, awaiting-scale-down, no-demand; a restart's cause: gpu-fault, oom, gpu-oom, eviction, "
    "image-or-config, liveness-probe, application-error, completed, unknown.";
constexpr absl::string_view kLiveInstructions =
    " This server also reads the extender's state now: a node's or node group's GPU topology and where it came "
    "from (get_topology), and the ledger's preferences, intents and held GPUs (get_ledger).";

// Only the params a method may take are checked; an absent or wrong one is invalid params.
absl::StatusOr<std::string> StringParam(const json& params, const char* name) {
  auto it = params.find(name);
  if (it == params.end() || !it->is_string()) {
    return absl::InvalidArgumentError(absl::StrCat("Invalid params: '", name, "' must be a string"));
  }
  return it->get<std::string>();
}

// The list methods have one page: a cursor can only be one this server never gave.
std::optional<json> RefuseCursor(const json& id, const json& params) {
  if (params.contains("cursor")) return Error(id, kInvalidParams, "Invalid params: no such cursor (there is one page)");
  return std::nullopt;
}

json Resources() {
  return json::array({
      {{"uri", kDecisionsUri},
       {"name", "decisions"},
       {"title", "Recent decisions"},
       {"description", absl::StrCat("The newest ", kResourceDecisions, " decision records")},
       {"mimeType", "application/json"}},
      {{"uri", kIdleGpusUri},
       {"name", "idle-gpus"},
       {"title", "Idle GPUs"},
       {"description", "Every node's free GPUs by why they are idle, as last recorded"},
       {"mimeType", "application/json"}},
  });
}

json ResourceTemplates(bool live) {
  json templates = json::array({
      {{"uriTemplate", absl::StrCat(kDecisionPrefix, "{id}")},
       {"name", "decision"},
       {"title", "One decision"},
       {"description", "A decision record by id"},
       {"mimeType", "application/json"}},
      {{"uriTemplate", absl::StrCat(kPodPrefix, "{namespace}/{name}")},
       {"name", "pod"},
       {"title", "A pod's story"},
       {"description", "Why a GPU pod is pending or where it went: its decision chain"},
       {"mimeType", "application/json"}},
  });
  if (!live) return templates;
  templates.push_back({{"uriTemplate", absl::StrCat(kTopologyNodePrefix, "{name}")},
                       {"name", "node-topology"},
                       {"title", "A node's GPU topology"},
                       {"description", "get_topology of one node: its GPUs and links, where they came from, which are free"},
                       {"mimeType", "application/json"}});
  templates.push_back({{"uriTemplate", absl::StrCat(kTopologyGroupPrefix, "{name}")},
                       {"name", "group-topology"},
                       {"title", "A node group's GPU topologies"},
                       {"description", absl::StrCat("get_topology of a node group: its first ", kResourceTopologyNodes,
                                                    " nodes by name")},
                       {"mimeType", "application/json"}});
  return templates;
}

json Prompts() {
  return json::array({{{"name", "diagnose-pending-gpu-pod"},
                       {"title", "Why is my GPU pod pending"},
                       {"description", "Diagnose a pending GPU pod from topofit's decisions: topology refusals, "
                                       "capacity asked, the group grown, GPUs held, idle GPUs elsewhere"},
                       {"arguments", json::array({{{"name", "pod"},
                                                   {"description", "the pod, NAMESPACE/NAME"},
                                                   {"required", true}}})}}});
}

// What server/discover and UnsupportedProtocolVersionError list.
json ModernVersions() {
  return json(std::vector<std::string>(std::begin(kModernProtocolVersions), std::end(kModernProtocolVersions)));
}

}  // namespace

McpServer::McpServer(history::PageSource pages, std::string version, std::string unavailable,
                     std::optional<LiveState> live)
    : pages_(std::move(pages)), version_(std::move(version)), unavailable_(std::move(unavailable)), live_(live) {
  if (!pages_) {
    pages_ = [why = absl::StrCat("the decision history is unavailable: ",
                                 unavailable_.empty() ? "not kept by this process" : unavailable_)](
                 const history::DecisionQuery&) -> absl::StatusOr<history::DecisionPage> {
      return absl::UnavailableError(why);
    };
  }
}

Answer McpServer::Serve(absl::string_view text, const std::optional<MirroredHeaders>& headers) const {
  const Message message = ParseMessage(text);
  switch (message.type) {
    case Message::Type::kInvalid:
      return {Error(message.id, message.error_code, message.error)};
    case Message::Type::kNotification:
    case Message::Type::kResponse:
      return {};  // notifications/initialized, cancelled: nothing to do or answer
    case Message::Type::kRequest:
      break;
  }
  // The era is the request's own (basic/versioning: a request carrying the per-request _meta is served
  // statelessly, one without by the 2025 rules), so both eras are served side by side on one process or
  // endpoint. On HTTP a 2026 MCP-Protocol-Version header makes it a 2026 request even without the _meta,
  // whose absence is then the error.
  if (ClaimsRequestMeta(message.params) ||
      (headers && headers->protocol_version && NamesModernEra(*headers->protocol_version))) {
    return ServeModern(message, headers);
  }
  try {
    return {Dispatch(message.id, message.method, message.params)};
  } catch (const std::exception& e) {
    return {Error(message.id, kInternalError, absl::StrCat("Internal error: ", e.what()))};
  }
}

// Revision 2026-07-28 in the order its checks are listed: the envelope (versioning, schema.ts), the HTTP
// headers against it (streamable-http, Server Validation), the revision (versioning: an unsupported one is
// UnsupportedProtocolVersionError naming the supported); then the method, without the removed lifecycle.
Answer McpServer::ServeModern(const Message& message, const std::optional<MirroredHeaders>& headers) const {
  const auto refuse = [&](int code, absl::string_view why, std::optional<json> data = std::nullopt) {
    return Answer{Error(message.id, code, why, std::move(data)), /*modern=*/true, /*refused=*/true};
  };
  const absl::StatusOr<std::string> version = RequestMetaVersion(message.params);
  if (!version.ok()) return refuse(kInvalidParams, version.status().message());
  if (headers) {
    if (std::optional<std::string> why = HeaderMismatch(*headers, *version, message.method, message.params)) {
      return refuse(kHeaderMismatch, *why);
    }
  }
  if (!IsModernProtocolVersion(*version)) {
    return refuse(kUnsupportedProtocolVersion, "Unsupported protocol version",
                  json{{"supported", ModernVersions()}, {"requested", *version}});
  }
  json reply;
  try {
    if (message.method == "server/discover") {
      reply = Discover(message.id);
    } else if (message.method == "initialize" || message.method == "ping") {
      // Removed by 2026-07-28 (changelog): say where to go rather than only that it is unknown.
      reply = Error(message.id, kMethodNotFound,
                    absl::StrCat("Method not found: ", message.method, " is not part of revision 2026-07-28 (",
                                 message.method == "initialize"
                                     ? "server/discover tells what this server speaks; 2025-11-25's initialize "
                                       "carries no _meta"
                                     : "server/discover shows the server answering",
                                 ")"));
    } else {
      reply = Dispatch(message.id, message.method, message.params);
    }
  } catch (const std::exception& e) {
    reply = Error(message.id, kInternalError, absl::StrCat("Internal error: ", e.what()));
  }
  return {ModernReply(std::move(reply), message.method, ServerInfo()), /*modern=*/true};
}

json McpServer::Dispatch(const json& id, const std::string& method, const json& params) const {
  if (method == "initialize") return Initialize(id, params);
  if (method == "ping") return Result(id, json::object());
  if (method == "tools/list") {
    json tools = ToolDefinitions();
    if (live_) {
      for (json& tool : LiveToolDefinitions()) tools.push_back(std::move(tool));
    }
    return RefuseCursor(id, params).value_or(Result(id, {{"tools", std::move(tools)}}));
  }
  if (method == "tools/call") return CallTool(id, params);
  if (method == "resources/list") return RefuseCursor(id, params).value_or(Result(id, {{"resources", Resources()}}));
  if (method == "resources/templates/list") {
    return RefuseCursor(id, params).value_or(Result(id, {{"resourceTemplates", ResourceTemplates(live_.has_value())}}));
  }
  if (method == "resources/read") return ReadResource(id, params);
  if (method == "prompts/list") return RefuseCursor(id, params).value_or(Result(id, {{"prompts", Prompts()}}));
  if (method == "prompts/get") return GetPrompt(id, params);
  return Error(id, kMethodNotFound, absl::StrCat("Method not found: ", method));
}

json McpServer::Initialize(const json& id, const json& params) const {
  absl::StatusOr<std::string> asked = StringParam(params, "protocolVersion");
  if (!asked.ok()) return Error(id, kInvalidParams, asked.status().message());
  // Version negotiation: the client's revision when this server speaks it, else the newest it does (the
  // client then decides whether to go on). A 2025 handshake cannot lead to 2026-07-28, which has none: a
  // client asking for it here gets 2025-11-25 too, as the official SDK's server answers.
  const std::string version = IsLegacyProtocolVersion(*asked) ? *asked : kLegacyProtocolVersions[0];
  return Result(id, {{"protocolVersion", version},
                     {"capabilities", Capabilities()},
                     {"serverInfo", ServerInfo()},
                     {"instructions", Instructions()}});
}

// server/discover (2026-07-28): what initialize told, without negotiating. supportedVersions are the
// revisions a request's _meta may name; 2025-11-25 is reached by initialize, not by naming it there, so it
// is not listed (as the official SDK's server does).
json McpServer::Discover(const json& id) const {
  return Result(id, {{"supportedVersions", ModernVersions()},
                     {"capabilities", Capabilities()},
                     {"instructions", Instructions()}});
}

// Nothing changes while the server runs (no list_changed notifications) and nothing is subscribed to.
json McpServer::Capabilities() const {
  return {{"tools", {{"listChanged", false}}},
          {"resources", {{"subscribe", false}, {"listChanged", false}}},
          {"prompts", {{"listChanged", false}}}};
}

json McpServer::ServerInfo() const {
  return {{"name", "topofit"}, {"title", "topofit decisions (read-only)"}, {"version", version_}};
}

std::string McpServer::Instructions() const { return absl::StrCat(kInstructions, live_ ? kLiveInstructions : ""); }

json McpServer::CallTool(const json& id, const json& params) const {
  absl::StatusOr<std::string> name = StringParam(params, "name");
  if (!name.ok()) return Error(id, kInvalidParams, name.status().message());
  if (!IsTool(*name) && !(live_ && IsLiveTool(*name))) {
    // Not listed without the live state: say where it is served rather than only that it is unknown.
    return Error(id, kInvalidParams,
                 IsLiveTool(*name) ? absl::StrCat("Unknown tool: ", *name, " (it reads the live GPU state and ledger: "
                                                  "served on /mcp of a running topofit extender or serve, not by "
                                                  "`topofit mcp`)")
                                   : absl::StrCat("Unknown tool: ", *name));
  }
  const auto args = params.find("arguments");
  if (args != params.end() && !args->is_object()) {
    return Error(id, kInvalidParams, "Invalid params: 'arguments' must be an object");
  }
  const json& arguments = args == params.end() ? json::object() : *args;
  if (IsLiveTool(*name)) return Result(id, CallLiveTool(*name, arguments, *live_));
  return Result(id, mcp::CallTool(*name, arguments, pages_));
}

json McpServer::ReadResource(const json& id, const json& params) const {
  absl::StatusOr<std::string> uri = StringParam(params, "uri");
  if (!uri.ok()) return Error(id, kInvalidParams, uri.status().message());
  absl::StatusOr<json> content = absl::NotFoundError("");
  absl::string_view rest = *uri;
  if (*uri == kDecisionsUri) {
    history::DecisionQuery query;
    query.limit = kResourceDecisions;
    content = DecisionsPage(query, pages_);
  } else if (*uri == kIdleGpusUri) {
    content = Explanation(history::Subject::kIdle, "", history::kMaxPageSize, pages_);
  } else if (absl::ConsumePrefix(&rest, kDecisionPrefix)) {
    int64_t decision = 0;
    if (absl::SimpleAtoi(rest, &decision) && decision > 0 && decision < std::numeric_limits<int64_t>::max()) {
      history::DecisionQuery query;
      query.before_id = decision + 1;
      query.limit = 1;
      content = DecisionsPage(query, pages_);
      if (content.ok() && ((*content)["decisions"].empty() || (*content)["decisions"][0]["id"] != decision)) {
        content = absl::NotFoundError("");
      } else if (content.ok()) {
        content = json((*content)["decisions"][0]);
      }
    }
  } else if (absl::ConsumePrefix(&rest, kPodPrefix) && std::count(rest.begin(), rest.end(), '/') == 1 &&
             !absl::StartsWith(rest, "/") && !absl::EndsWith(rest, "/")) {
    content = Explanation(history::Subject::kPod, std::string(rest), history::kMaxPageSize, pages_);
  } else if (live_ && absl::ConsumePrefix(&rest, kTopologyNodePrefix) && !rest.empty()) {
    content = TopologyOf(std::string(rest), "", 1, "", *live_);
  } else if (live_ && absl::ConsumePrefix(&rest, kTopologyGroupPrefix) && !rest.empty()) {
    content = TopologyOf("", std::string(rest), kResourceTopologyNodes, "", *live_);
  }
  if (absl::IsNotFound(content.status())) {
    return Error(id, kResourceNotFound, "Resource not found", json{{"uri", *uri}});
  }
  if (!content.ok()) return Error(id, kInternalError, content.status().message());
  return Result(id, {{"contents", json::array({{{"uri", *uri}, {"mimeType", "application/json"},
                                                 {"text", content->dump(-1, ' ', false, json::error_handler_t::replace)}}})}});
}

json McpServer::GetPrompt(const json& id, const json& params) const {
  absl::StatusOr<std::string> name = StringParam(params, "name");
  if (!name.ok()) return Error(id, kInvalidParams, name.status().message());
  if (*name != "diagnose-pending-gpu-pod") return Error(id, kInvalidParams, absl::StrCat("Unknown prompt: ", *name));
  const auto args = params.find("arguments");
  const json* pod = args != params.end() && args->is_object() && args->contains("pod") ? &(*args)["pod"] : nullptr;
  if (pod == nullptr || !pod->is_string() || pod->get<std::string>().empty()) {
    return Error(id, kInvalidParams, "Invalid params: argument 'pod' (NAMESPACE/NAME) is required");
  }
  const std::string pod_name = pod->get<std::string>();
  // get_topology only where it is served (the live state): a history-only server does not list it.
  std::vector<std::string> steps = {
      absl::StrCat("Call diagnose_pod with pod \"", pod_name, "\": its state and first cause, with evidence."),
      absl::StrCat("Call explain_pending_pod with pod \"", pod_name, "\" and read its chain, newest first."),
      "For each filter refusal, say which nodes refused and why in topology terms (weakest link, bandwidth, GPUs "
      "free vs asked, GPUs held for another pod's scale-up)."};
  if (live_) {
    steps.push_back(
        "Call get_topology on a node that refused it (or on its node group): its GPUs and links, where that "
        "topology came from, which GPUs are free. Does the refusal match the hardware?");
  }
  steps.push_back(
      "If capacity was asked, call explain_scale_up on the group the expander chose: say why it won and why the "
      "others lost, and whether new nodes are booting or held for this pod.");
  steps.push_back("Call list_idle_gpus: are GPUs idle that this pod could use, and why not (fragmented, held)?");
  std::string text = absl::StrCat("GPU pod ", pod_name, " is pending (or was). Using topofit's read-only tools, find out why:\n");
  for (size_t i = 0; i < steps.size(); ++i) absl::StrAppend(&text, i + 1, ". ", steps[i], "\n");
  text += "Answer in a few sentences an operator can act on, quoting the reason codes, then the evidence.";
  return Result(id, {{"description", absl::StrCat("Diagnose why ", pod_name, " is pending")},
                     {"messages", json::array({{{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}}})}});
}

}  // namespace topofit::mcp
