#pragma once

// The MCP tools over what a running extender knows now, beside its decision history: its GPU state
// (get_topology: a node's or a node group's GPU topology, where it came from, which GPUs are free) and its
// ledger (get_ledger: preferences, intents, and the GPUs the intents hold). Only /mcp of `topofit
// extender` and `topofit serve` has them: a `topofit mcp` stdio session reads a decision history alone,
// so it neither lists nor answers them (docs/mcp.md). Nothing here mutates.

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "ledger/ledger.h"
#include "scheduler/gpu_state.h"

namespace topofit::mcp {

// The live state the tools read; both outlive the server.
struct LiveState {
  const scheduler::GpuState* gpus = nullptr;
  const ledger::Ledger* ledger = nullptr;
};

// tools/list's entries for get_topology and get_ledger.
nlohmann::json LiveToolDefinitions();
bool IsLiveTool(const std::string& name);
// A tools/call result, as mcp::CallTool's; an unknown node or group is a tool error naming what is known.
nlohmann::json CallLiveTool(const std::string& name, const nlohmann::json& arguments, const LiveState& live);

// get_topology's structured content for one node (`group` empty) or a node group's nodes in name order,
// `limit` of them after `cursor` (a previous answer's nextCursor; "" for the first page). NotFound for a
// node, or a group, the GPU state does not know; InvalidArgument for a cursor this server did not give.
absl::StatusOr<nlohmann::json> TopologyOf(const std::string& node, const std::string& group, int limit,
                                          const std::string& cursor, const LiveState& live);

}  // namespace topofit::mcp
