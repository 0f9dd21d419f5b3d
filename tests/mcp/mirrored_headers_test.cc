#include "mcp/mirrored_headers.h"

#include <catch2/catch.hpp>

namespace topofit::mcp {
namespace {

using nlohmann::json;

TEST_CASE("a header value is plain, or Base64 behind the sentinel", "[mcp]") {
  CHECK(DecodeHeaderValue("list_decisions") == "list_decisions");
  // The spec's own examples (streamable-http, Value Encoding).
  CHECK(DecodeHeaderValue("=?base64?SGVsbG8sIOS4lueVjA==?=") == "Hello, \xE4\xB8\x96\xE7\x95\x8C");
  CHECK(DecodeHeaderValue("=?base64?IHBhZGRlZCA=?=") == " padded ");
  CHECK(DecodeHeaderValue("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=") == "=?base64?literal?=");
  CHECK(DecodeHeaderValue("=?base64?not base64!?=") == std::nullopt);
  // Half a sentinel is a plain value; the markers are case-sensitive.
  CHECK(DecodeHeaderValue("=?base64?abc") == "=?base64?abc");
  CHECK(DecodeHeaderValue("=?BASE64?YQ==?=") == "=?BASE64?YQ==?=");
}

TEST_CASE("the mirrored headers must fit the body", "[mcp]") {
  const MirroredHeaders call{"2026-07-28", "tools/call", "list_decisions"};
  const json params = {{"name", "list_decisions"}, {"arguments", json::object()}};
  CHECK(HeaderMismatch(call, "2026-07-28", "tools/call", params) == std::nullopt);
  CHECK(HeaderMismatch({"2026-07-28", "tools/call", "=?base64?bGlzdF9kZWNpc2lvbnM=?="}, "2026-07-28", "tools/call",
                       params) == std::nullopt);
  // A method without a name to mirror needs no Mcp-Name, and one sent is not looked at.
  CHECK(HeaderMismatch({"2026-07-28", "tools/list", std::nullopt}, "2026-07-28", "tools/list", json::object()) ==
        std::nullopt);
  CHECK(HeaderMismatch({"2026-07-28", "tools/list", "x"}, "2026-07-28", "tools/list", json::object()) == std::nullopt);
  // No name in the body: nothing to mirror (the method's own check says the params are wrong).
  CHECK(HeaderMismatch({"2026-07-28", "tools/call", std::nullopt}, "2026-07-28", "tools/call", json::object()) ==
        std::nullopt);
  CHECK(HeaderMismatch({"2026-07-28", "resources/read", "topofit://decisions"}, "2026-07-28", "resources/read",
                       {{"uri", "topofit://decisions"}}) == std::nullopt);

  struct Row {
    const char* name;
    MirroredHeaders headers;
    std::string method;
    json params;
    const char* says;
  };
  const Row rows[] = {
      {"no MCP-Protocol-Version", {std::nullopt, "tools/call", "list_decisions"}, "tools/call", params,
       "the MCP-Protocol-Version header is missing"},
      {"another MCP-Protocol-Version", {"2025-11-25", "tools/call", "list_decisions"}, "tools/call", params,
       "MCP-Protocol-Version header value '2025-11-25' does not match body value '2026-07-28'"},
      {"no Mcp-Method", {"2026-07-28", std::nullopt, "list_decisions"}, "tools/call", params,
       "the Mcp-Method header is missing"},
      {"another Mcp-Method", {"2026-07-28", "tools/list", "list_decisions"}, "tools/call", params,
       "Mcp-Method header value 'tools/list' does not match body value 'tools/call'"},
      {"Mcp-Method differs in case (values are case-sensitive)", {"2026-07-28", "Tools/Call", "list_decisions"},
       "tools/call", params, "does not match body value 'tools/call'"},
      {"no Mcp-Name for a tool call", {"2026-07-28", "tools/call", std::nullopt}, "tools/call", params,
       "the Mcp-Name header is missing"},
      {"another tool's Mcp-Name", {"2026-07-28", "tools/call", "get_decision"}, "tools/call", params,
       "Mcp-Name header value 'get_decision' does not match body value 'list_decisions'"},
      {"a broken sentinel", {"2026-07-28", "tools/call", "=?base64?***?="}, "tools/call", params,
       "Mcp-Name header value '=?base64?***?=' is not valid Base64"},
      {"another prompt's Mcp-Name", {"2026-07-28", "prompts/get", "x"}, "prompts/get",
       {{"name", "diagnose-pending-gpu-pod"}}, "does not match body value 'diagnose-pending-gpu-pod'"},
      {"another resource's Mcp-Name", {"2026-07-28", "resources/read", "topofit://idle-gpus"}, "resources/read",
       {{"uri", "topofit://decisions"}}, "does not match body value 'topofit://decisions'"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const std::optional<std::string> why = HeaderMismatch(row.headers, "2026-07-28", row.method, row.params);
      REQUIRE(why);
      CHECK_THAT(*why, Catch::StartsWith("Header mismatch: ") && Catch::Contains(row.says));
    }
  }
}

}  // namespace
}  // namespace topofit::mcp
