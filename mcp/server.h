#pragma once

// topofit's read-only MCP server (Model Context Protocol): the tools (mcp/tools.h), resources (recent
// decisions, idle GPUs, one decision, a pod's story) and one prompt (diagnose-pending-gpu-pod), over any
// transport: Serve takes one JSON-RPC message's text and gives the reply's, or nothing for a notification.
// It speaks both eras of the protocol (mcp/protocol_version.h), each message by its own: revision 2025-11-25
// (negotiating down to 2025-06-18 and 2025-03-26) with its lifecycle (initialize, notifications/initialized,
// ping) for a message that names no revision, and revision 2026-07-28, stateless, for one whose `_meta`
// names a revision (or, on HTTP, whose MCP-Protocol-Version header names a 2026 one): server/discover
// instead of the handshake, the revision checked on every request. Stateless between messages in both eras,
// so the HTTP transport needs no session; every answer comes from the decision history, read through a
// PageSource, and where the server runs in an extender, from its live GPU state and ledger
// (mcp/live_tools.h: get_topology, get_ledger and the topology resources, listed only there).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/string_view.h"
#include "history/explain_query.h"
#include "mcp/json_rpc.h"
#include "mcp/live_tools.h"
#include "mcp/mirrored_headers.h"
#include "mcp/protocol_version.h"

namespace topofit::mcp {

// One message's reply, and what a transport needs to know of it to carry it.
struct Answer {
  std::optional<nlohmann::json> reply;  // nullopt: a notification or a response, nothing to answer
  bool modern = false;   // served as revision 2026-07-28
  bool refused = false;  // modern, and refused before its method ran: its _meta, headers or revision (HTTP 400)
};

class McpServer {
 public:
  // `pages` null: the history is unavailable (`unavailable` says why) and the tools answer that as errors.
  // Without `live` (a stdio session over a decision history) the live tools and resources do not exist.
  McpServer(history::PageSource pages, std::string version, std::string unavailable = "",
            std::optional<LiveState> live = std::nullopt);

  // One message. `headers`: it came over Streamable HTTP with these (a 2026-07-28 request's must fit its
  // body); stdio has none. Never throws.
  Answer Serve(absl::string_view text, const std::optional<MirroredHeaders>& headers = std::nullopt) const;
  // Serve's reply alone, for stdio.
  std::optional<nlohmann::json> Handle(absl::string_view text) const { return Serve(text).reply; }

 private:
  Answer ServeModern(const Message& message, const std::optional<MirroredHeaders>& headers) const;
  // Every method of 2025-11-25; ServeModern answers first where 2026-07-28 differs.
  nlohmann::json Dispatch(const nlohmann::json& id, const std::string& method, const nlohmann::json& params) const;
  nlohmann::json Initialize(const nlohmann::json& id, const nlohmann::json& params) const;
  nlohmann::json Discover(const nlohmann::json& id) const;
  nlohmann::json Capabilities() const;
  nlohmann::json ServerInfo() const;
  std::string Instructions() const;
  nlohmann::json CallTool(const nlohmann::json& id, const nlohmann::json& params) const;
  nlohmann::json ReadResource(const nlohmann::json& id, const nlohmann::json& params) const;
  nlohmann::json GetPrompt(const nlohmann::json& id, const nlohmann::json& params) const;

  history::PageSource pages_;
  std::string version_;
  std::string unavailable_;
  std::optional<LiveState> live_;
};

}  // namespace topofit::mcp
