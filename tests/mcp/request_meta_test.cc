#include "mcp/request_meta.h"

#include <catch2/catch.hpp>

#include "tests/kube/status_matchers.h"

namespace topofit::mcp {
namespace {

using nlohmann::json;

const json kEnvelope = {{kProtocolVersionKey, "2026-07-28"},
                        {kClientCapabilitiesKey, json::object()},
                        {kClientInfoKey, {{"name", "client"}, {"version", "1.0"}}}};

json WithMeta(json meta) { return {{"name", "list_decisions"}, {"_meta", std::move(meta)}}; }

TEST_CASE("a request claims the 2026 envelope by its protocol-version key alone", "[mcp]") {
  CHECK(ClaimsRequestMeta(WithMeta(kEnvelope)));
  CHECK(ClaimsRequestMeta(WithMeta({{kProtocolVersionKey, 5}})));  // claimed, if malformed
  CHECK_FALSE(ClaimsRequestMeta(json::object()));
  CHECK_FALSE(ClaimsRequestMeta({{"_meta", "2026-07-28"}}));
  // What a 2025 client may send in _meta.
  CHECK_FALSE(ClaimsRequestMeta(WithMeta({{"progressToken", 7}})));
  CHECK_FALSE(ClaimsRequestMeta(WithMeta({{kClientCapabilitiesKey, json::object()}})));
}

TEST_CASE("the envelope names the revision once it is whole", "[mcp]") {
  REQUIRE_OK(RequestMetaVersion(WithMeta(kEnvelope)));
  CHECK(*RequestMetaVersion(WithMeta(kEnvelope)) == "2026-07-28");
  // clientInfo is a SHOULD: a request without it is served. Unknown versions are for the caller to refuse.
  CHECK(*RequestMetaVersion(WithMeta({{kProtocolVersionKey, "1900-01-01"}, {kClientCapabilitiesKey, json::object()}})) ==
        "1900-01-01");

  struct Row {
    const char* name;
    json params;
    const char* says;
  };
  const Row rows[] = {
      {"no _meta", json::object(), "no _meta"},
      {"_meta not an object", {{"_meta", json::array()}}, "no _meta"},
      {"no protocol version", WithMeta({{kClientCapabilitiesKey, json::object()}}),
       "_meta io.modelcontextprotocol/protocolVersion is missing"},
      {"a protocol version not a string", WithMeta({{kProtocolVersionKey, 20260728}, {kClientCapabilitiesKey, json::object()}}),
       "io.modelcontextprotocol/protocolVersion must be a string"},
      {"no client capabilities", WithMeta({{kProtocolVersionKey, "2026-07-28"}}),
       "_meta io.modelcontextprotocol/clientCapabilities is missing"},
      {"client capabilities not an object",
       WithMeta({{kProtocolVersionKey, "2026-07-28"}, {kClientCapabilitiesKey, json::array()}}),
       "io.modelcontextprotocol/clientCapabilities must be an object"},
      {"client info without a version",
       WithMeta({{kProtocolVersionKey, "2026-07-28"}, {kClientCapabilitiesKey, json::object()}, {kClientInfoKey, {{"name", "c"}}}}),
       "io.modelcontextprotocol/clientInfo must be an object with a string name and version"},
      {"client info a string",
       WithMeta({{kProtocolVersionKey, "2026-07-28"}, {kClientCapabilitiesKey, json::object()}, {kClientInfoKey, "c 1.0"}}),
       "io.modelcontextprotocol/clientInfo must be"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) { CHECK_STATUS(RequestMetaVersion(row.params), absl::StatusCode::kInvalidArgument, row.says); }
  }
}

}  // namespace
}  // namespace topofit::mcp
