#include "mcp/modern_result.h"

#include <catch2/catch.hpp>

#include "mcp/json_rpc.h"
#include "mcp/request_meta.h"

namespace topofit::mcp {
namespace {

using nlohmann::json;

const json kServer = {{"name", "topofit"}, {"version", "test"}};

TEST_CASE("2026 results say their type and who answered", "[mcp]") {
  const json reply = ModernReply(Result(3, {{"content", json::array()}}), "tools/call", kServer);
  CHECK(reply == json{{"jsonrpc", "2.0"},
                      {"id", 3},
                      {"result",
                       {{"content", json::array()},
                        {"resultType", "complete"},
                        {"_meta", {{kServerInfoKey, kServer}}}}}});
}

TEST_CASE("2026 cacheable results say for how long and for whom", "[mcp]") {
  for (const char* method : {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list"}) {
    CAPTURE(method);
    const json result = ModernReply(Result(1, json::object()), method, kServer)["result"];
    CHECK(result["ttlMs"] == kListTtlMs);
    CHECK(result["cacheScope"] == "private");
  }
  const json read = ModernReply(Result(1, {{"contents", json::array()}}), "resources/read", kServer)["result"];
  CHECK(read["ttlMs"] == 0);
  CHECK(read["cacheScope"] == "private");
  for (const char* method : {"tools/call", "prompts/get"}) {
    CAPTURE(method);
    const json result = ModernReply(Result(1, json::object()), method, kServer)["result"];
    CHECK_FALSE(result.contains("ttlMs"));
    CHECK_FALSE(result.contains("cacheScope"));
  }
}

TEST_CASE("a 2026 error keeps its code, but a resource not found is invalid params", "[mcp]") {
  const json missing = Error(4, kResourceNotFound, "Resource not found", json{{"uri", "topofit://x"}});
  CHECK(ModernReply(missing, "resources/read", kServer) ==
        Error(4, kInvalidParams, "Resource not found", json{{"uri", "topofit://x"}}));
  const json unknown = Error(5, kMethodNotFound, "Method not found: x");
  CHECK(ModernReply(unknown, "x", kServer) == unknown);
}

}  // namespace
}  // namespace topofit::mcp
