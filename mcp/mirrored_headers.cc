#include "mcp/mirrored_headers.h"

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace topofit::mcp {
namespace {

// The body field Mcp-Name mirrors, for the methods that have one.
const char* NameField(const std::string& method) {
  if (method == "tools/call" || method == "prompts/get") return "name";
  if (method == "resources/read") return "uri";
  return nullptr;
}

}  // namespace

std::optional<std::string> DecodeHeaderValue(absl::string_view value) {
  absl::string_view encoded = value;
  if (!absl::ConsumePrefix(&encoded, "=?base64?") || !absl::ConsumeSuffix(&encoded, "?=")) return std::string(value);
  std::string decoded;
  if (!absl::Base64Unescape(encoded, &decoded)) return std::nullopt;
  return decoded;
}

std::optional<std::string> HeaderMismatch(const MirroredHeaders& headers, absl::string_view version,
                                          const std::string& method, const nlohmann::json& params) {
  if (!headers.protocol_version) return "Header mismatch: the MCP-Protocol-Version header is missing";
  if (*headers.protocol_version != version) {
    return absl::StrCat("Header mismatch: MCP-Protocol-Version header value '", *headers.protocol_version,
                        "' does not match body value '", version, "'");
  }
  if (!headers.method) return "Header mismatch: the Mcp-Method header is missing";
  if (*headers.method != method) {
    return absl::StrCat("Header mismatch: Mcp-Method header value '", *headers.method, "' does not match body value '",
                        method, "'");
  }
  const char* field = NameField(method);
  const auto body = field == nullptr ? params.end() : params.find(field);
  // No string there: nothing to mirror, and the method's own checks say what is wrong with the params.
  if (body == params.end() || !body->is_string()) return std::nullopt;
  if (!headers.name) return "Header mismatch: the Mcp-Name header is missing";
  const std::optional<std::string> name = DecodeHeaderValue(*headers.name);
  if (!name) return absl::StrCat("Header mismatch: Mcp-Name header value '", *headers.name, "' is not valid Base64");
  if (*name != body->get<std::string>()) {
    return absl::StrCat("Header mismatch: Mcp-Name header value '", *name, "' does not match body value '",
                        body->get<std::string>(), "'");
  }
  return std::nullopt;
}

}  // namespace topofit::mcp
