#pragma once

// topofit's read-only MCP server (Model Context Protocol, revision 2025-11-25, negotiating down to
// 2025-06-18 and 2025-03-26): the lifecycle (initialize, notifications/initialized, ping), tools
// (mcp/tools.h), resources (recent decisions, idle GPUs, one decision, a pod's story) and one prompt
// (diagnose-pending-gpu-pod), over any transport: Handle takes one JSON-RPC message's text and gives the
// reply's, or nothing for a notification. Stateless between messages, so the HTTP transport needs no
// session; every answer comes from the decision history, read through a PageSource, and where the server
// runs in an extender, from its live GPU state and ledger (mcp/live_tools.h: get_topology, get_ledger and
// the topology resources, listed only there).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/string_view.h"
#include "history/explain_query.h"
#include "mcp/live_tools.h"

namespace topofit::mcp {

// The revisions this server speaks, newest first; an initialize asking for another gets the newest.
inline constexpr const char* kProtocolVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};
bool IsSupportedProtocolVersion(absl::string_view version);

class McpServer {
 public:
  // `pages` null: the history is unavailable (`unavailable` says why) and the tools answer that as errors.
  // Without `live` (a stdio session over a decision history) the live tools and resources do not exist.
  McpServer(history::PageSource pages, std::string version, std::string unavailable = "",
            std::optional<LiveState> live = std::nullopt);

  // The reply to one message, or nullopt when there is none (a notification, a response). Never throws.
  std::optional<nlohmann::json> Handle(absl::string_view text) const;

 private:
  nlohmann::json Dispatch(const nlohmann::json& id, const std::string& method, const nlohmann::json& params) const;
  nlohmann::json Initialize(const nlohmann::json& id, const nlohmann::json& params) const;
  nlohmann::json CallTool(const nlohmann::json& id, const nlohmann::json& params) const;
  nlohmann::json ReadResource(const nlohmann::json& id, const nlohmann::json& params) const;
  nlohmann::json GetPrompt(const nlohmann::json& id, const nlohmann::json& params) const;

  history::PageSource pages_;
  std::string version_;
  std::string unavailable_;
  std::optional<LiveState> live_;
};

}  // namespace topofit::mcp
