#pragma once

// The MCP server's tools: read-only questions over the decision history (history/explain_query.h), each
// with its input and output JSON Schema. Nothing here mutates, and nothing reaches the API server.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "history/explain_query.h"
#include "mcp/tool_parts.h"

namespace topofit::mcp {

// Records one tools/call answer keeps: enough for any explanation, bounded so that a page cannot grow past
// what a model's context holds.
inline constexpr int kMaxToolRecords = 100;

// tools/list's entries: name, title, description, inputSchema, outputSchema, annotations (read-only).
nlohmann::json ToolDefinitions();
bool IsTool(const std::string& name);

// A tools/call result: {content: [text], structuredContent, isError?}. Arguments that do not match the
// tool's input schema (wrong type, limit out of range, a cursor this server did not give) and a history
// that cannot be read are tool errors (isError, with the reason), as revision 2025-11-25 asks, so a model
// can correct itself. `name` must be a tool (IsTool).
nlohmann::json CallTool(const std::string& name, const nlohmann::json& arguments, const history::PageSource& pages);

// Shared with the resources: the newest `limit` decisions matching `query`'s filters as structured
// content ({decisions, nextCursor?, truncated?}), capped at kMaxToolBytes.
absl::StatusOr<nlohmann::json> DecisionsPage(history::DecisionQuery query, const history::PageSource& pages);
// Explanations as structured content ({pod|group|idle, text, decisions, correlationId?, truncated?}).
absl::StatusOr<nlohmann::json> Explanation(history::Subject subject, const std::string& name, int limit,
                                           const history::PageSource& pages);

}  // namespace topofit::mcp
