#pragma once

// The per-request `_meta` envelope of revision 2026-07-28 (schema.ts, RequestMetaObject): every request
// names its protocol revision and the client's capabilities there, since there is no handshake to carry
// them; results name the server.

#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace topofit::mcp {

inline constexpr char kProtocolVersionKey[] = "io.modelcontextprotocol/protocolVersion";
inline constexpr char kClientCapabilitiesKey[] = "io.modelcontextprotocol/clientCapabilities";
inline constexpr char kClientInfoKey[] = "io.modelcontextprotocol/clientInfo";
inline constexpr char kServerInfoKey[] = "io.modelcontextprotocol/serverInfo";

// Whether a request's params claim the envelope: `_meta` has the protocol-version key. Other keys alone do
// not (a 2025 client may send a progressToken, or its own keys); once claimed, a malformed envelope is an
// error, never a fall back to the 2025 handshake's rules.
bool ClaimsRequestMeta(const nlohmann::json& params);

// The revision a request's envelope names, once it is whole: the protocol version a string, the client's
// capabilities an object (empty: none), the client's identity, when given, an object with a string name and
// version. Otherwise InvalidArgument naming the key and what is wrong, for an invalid-params error.
absl::StatusOr<std::string> RequestMetaVersion(const nlohmann::json& params);

}  // namespace topofit::mcp
