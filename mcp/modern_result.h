#pragma once

// What revision 2026-07-28 adds to a reply the methods shared with 2025-11-25 give (schema.ts): every result
// says its `resultType` ("complete": topofit never asks the client for input mid-request) and names the
// server in `_meta` (io.modelcontextprotocol/serverInfo: with no handshake, this is where a client learns
// it); the cacheable ones (server/discover, the lists, resources/read) say for how long a client may keep
// them (`ttlMs`) and whether a shared cache may (`cacheScope`); and a resource that does not exist is
// invalid params (-32602), not 2025's -32002, which 2026-07-28 forbids.

#include <cstdint>

#include <nlohmann/json.hpp>

#include "absl/strings/string_view.h"

namespace topofit::mcp {

// The lists and server/discover change only when the server is upgraded (listChanged is false); a client
// re-reads them after five minutes, so a rolling upgrade's new tools reach it soon.
inline constexpr int64_t kListTtlMs = 5 * 60 * 1000;
// A resource is the decision history or live state now: stale at once.
inline constexpr int64_t kResourceTtlMs = 0;

// `reply` (a JSON-RPC result or error for `method`) as 2026-07-28 words it. `server_info`: the server's
// Implementation (name, title, version). Every cache scope is private: /mcp sits behind the admin token, and
// nothing it answers is for a cache shared beyond it.
nlohmann::json ModernReply(nlohmann::json reply, absl::string_view method, const nlohmann::json& server_info);

}  // namespace topofit::mcp
