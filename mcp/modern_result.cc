#include "mcp/modern_result.h"

#include <optional>
#include <utility>

#include "mcp/json_rpc.h"
#include "mcp/request_meta.h"

namespace topofit::mcp {
namespace {

// CacheableResult's methods (schema.ts): how long their answer keeps, or nullopt for the others.
std::optional<int64_t> TtlMs(absl::string_view method) {
  if (method == "resources/read") return kResourceTtlMs;
  if (method == "server/discover" || method == "tools/list" || method == "prompts/list" ||
      method == "resources/list" || method == "resources/templates/list") {
    return kListTtlMs;
  }
  return std::nullopt;
}

}  // namespace

nlohmann::json ModernReply(nlohmann::json reply, absl::string_view method, const nlohmann::json& server_info) {
  if (auto error = reply.find("error"); error != reply.end()) {
    if ((*error)["code"] == kResourceNotFound) (*error)["code"] = kInvalidParams;
    return reply;
  }
  nlohmann::json& result = reply["result"];
  result["resultType"] = "complete";
  result["_meta"][kServerInfoKey] = server_info;
  if (const std::optional<int64_t> ttl = TtlMs(method)) {
    result["ttlMs"] = *ttl;
    result["cacheScope"] = "private";
  }
  return reply;
}

}  // namespace topofit::mcp
