#pragma once

// The HTTP headers revision 2026-07-28's Streamable HTTP copies from a request's body, so that load
// balancers and gateways can route without parsing it (basic/transports/streamable-http, "Request
// Metadata"). A server that reads the body must refuse a request whose headers disagree with it, or lack
// one it requires: else a proxy routing on the header and this server acting on the body would see two
// different requests.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/string_view.h"

namespace topofit::mcp {

// As they arrived; nullopt when absent.
struct MirroredHeaders {
  std::optional<std::string> protocol_version;  // MCP-Protocol-Version: the body's _meta protocol version
  std::optional<std::string> method;            // Mcp-Method: the body's method
  // Mcp-Name: params.name (tools/call, prompts/get) or params.uri (resources/read)
  std::optional<std::string> name;
};

// A header value as the client meant it: as is, or the UTF-8 behind the Base64 sentinel `=?base64?...?=`
// (how a client sends a value that is not plain ASCII); nullopt when the sentinel holds no valid Base64.
std::optional<std::string> DecodeHeaderValue(absl::string_view value);

// Why the headers do not fit the body (`version`: its _meta protocol version): a required header missing,
// a value that differs from the body's, a sentinel that does not decode; the HeaderMismatch error's
// message. nullopt when they fit. Mcp-Param-* headers are not looked at: they mirror tool arguments marked
// x-mcp-header, and no topofit tool marks any.
std::optional<std::string> HeaderMismatch(const MirroredHeaders& headers, absl::string_view version,
                                          const std::string& method, const nlohmann::json& params);

}  // namespace topofit::mcp
