#pragma once

// JSON-RPC 2.0 as MCP uses it (no batches since revision 2025-06-18; ids are strings or integers, never
// null): one message classified, and the error objects the spec names.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/string_view.h"

namespace topofit::mcp {

// The JSON-RPC error codes, and MCP's: a resource it does not have (2025-11-25 and before; 2026-07-28 says
// invalid params instead), and 2026-07-28's for HTTP headers that do not fit the body and a protocol
// revision the server does not speak.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
inline constexpr int kResourceNotFound = -32002;
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kUnsupportedProtocolVersion = -32022;

// A message as it arrived, sorted by what it is. A response (to a request this server sent, which it never
// does) is ignored like a notification.
struct Message {
  enum class Type { kRequest, kNotification, kResponse, kInvalid };
  Type type = Type::kInvalid;
  nlohmann::json id;  // a request's (string or integer); null otherwise
  std::string method;
  nlohmann::json params = nlohmann::json::object();  // absent: an empty object
  std::string error;  // kInvalid: why, for the error's message
  int error_code = kInvalidRequest;
};

// Classifies `text`: kInvalid with kParseError when it is not JSON, kInvalidRequest when it is not one
// JSON-RPC 2.0 message, kInvalidParams when a request's params are not an object (its id kept).
Message ParseMessage(absl::string_view text);

nlohmann::json Result(const nlohmann::json& id, nlohmann::json result);
nlohmann::json Error(const nlohmann::json& id, int code, absl::string_view message,
                     std::optional<nlohmann::json> data = std::nullopt);

}  // namespace topofit::mcp
