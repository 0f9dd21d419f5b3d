#include "mcp/json_rpc.h"

#include <string>
#include <utility>

#include "codec/bounded_json.h"

namespace topofit::mcp {

Message ParseMessage(absl::string_view text) {
  Message m;
  // Bounded: the tools copy and walk their arguments recursively (codec/bounded_json.h).
  absl::StatusOr<nlohmann::json> parsed = codec::ParseBoundedJson(text, codec::kRequestJsonLimits, "Parse error");
  if (!parsed.ok()) {
    m.error_code = kParseError;
    m.error = std::string(parsed.status().message());  // "Parse error: malformed JSON", or a limit exceeded
    return m;
  }
  nlohmann::json& json = *parsed;
  if (!json.is_object()) {
    m.error = json.is_array() ? "Invalid Request: batches are not part of MCP since revision 2025-06-18"
                              : "Invalid Request: a message is a JSON object";
    return m;
  }
  if (auto v = json.find("jsonrpc"); v == json.end() || *v != "2.0") {
    m.error = "Invalid Request: \"jsonrpc\" must be \"2.0\"";
    return m;
  }
  const auto id = json.find("id");
  if (id != json.end() && !id->is_string() && !id->is_number_integer()) {
    m.error = "Invalid Request: \"id\" must be a string or an integer";
    return m;
  }
  const auto method = json.find("method");
  if (method == json.end()) {
    if (id != json.end() && (json.contains("result") || json.contains("error"))) {
      m.type = Message::Type::kResponse;
      return m;
    }
    m.error = "Invalid Request: no \"method\"";
    return m;
  }
  if (!method->is_string()) {
    m.error = "Invalid Request: \"method\" must be a string";
    return m;
  }
  m.method = method->get<std::string>();
  if (id != json.end()) m.id = *id;
  if (auto params = json.find("params"); params != json.end()) {
    if (!params->is_object()) {
      m.error_code = kInvalidParams;
      m.error = "Invalid params: \"params\" must be an object";
      return m;
    }
    m.params = std::move(*params);
  }
  m.type = id != json.end() ? Message::Type::kRequest : Message::Type::kNotification;
  return m;
}

nlohmann::json Result(const nlohmann::json& id, nlohmann::json result) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

nlohmann::json Error(const nlohmann::json& id, int code, absl::string_view message, std::optional<nlohmann::json> data) {
  nlohmann::json error = {{"code", code}, {"message", std::string(message)}};
  if (data) error["data"] = std::move(*data);
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

}  // namespace topofit::mcp
