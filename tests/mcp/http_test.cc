#include "mcp/http.h"

#include <httplib.h>

#include <memory>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "mcp/json_rpc.h"
#include "mcp/request_meta.h"
#include "server/metrics.h"
#include "tests/server/non_loopback_address.h"

namespace topofit::mcp {
namespace {

constexpr char kToken[] = "mcp-token";
constexpr char kPing[] = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";

TEST_CASE("only loopback origins (or none) may reach /mcp", "[mcp][http]") {
  for (const char* origin : {"", "http://localhost", "http://localhost:6274", "https://127.0.0.1:9090", "http://[::1]:80"}) {
    CAPTURE(origin);
    CHECK(IsAllowedOrigin(origin));
  }
  for (const char* origin : {"http://evil.example.com", "http://localhost.evil.com", "http://127.0.0.1.nip.io",
                             "http://localhost:", "http://localhost:abc", "http://localhost:+80", "http://localhost:0",
                             "http://localhost:70000", "localhost", "null", "file://", "http://[::1]x"}) {
    CAPTURE(origin);
    CHECK_FALSE(IsAllowedOrigin(origin));
  }
}

// /mcp on a real server (on loopback, or on every address), over an empty history.
struct Route {
  explicit Route(McpRouteOptions route = {kToken}, const char* address = "127.0.0.1") : mcp(nullptr, "test") {
    server::HttpServerOptions options;
    options.address = address;
    options.name = "ops";
    server = server::HttpServer::Create(options, registry).value();
    RegisterMcpRoute(*server, mcp, std::move(route));
    port = server->Start().value();
  }
  ~Route() { server->Stop(); }
  httplib::Result Post(httplib::Headers headers, const std::string& body = kPing,
                       const std::string& type = "application/json", const std::string& host = "127.0.0.1") {
    httplib::Client client(host, port);
    return client.Post("/mcp", headers, body, type);
  }
  McpServer mcp;
  server::MetricsRegistry registry;
  std::unique_ptr<server::HttpServer> server;
  int port = 0;
};

httplib::Headers Auth(httplib::Headers more = {}) {
  more.emplace("Authorization", absl::StrCat("Bearer ", kToken));
  return more;
}

int JsonRpcCode(const httplib::Result& r) { return nlohmann::json::parse(r->body)["error"]["code"].get<int>(); }

TEST_CASE("POST /mcp: origin, token, protocol version and media type first, then the message", "[mcp][http]") {
  Route route;
  struct Row {
    const char* name;
    httplib::Headers headers;
    std::string body;
    std::string type;
    int status;
  };
  const Row rows[] = {
      {"a ping", Auth(), kPing, "application/json", 200},
      {"a ping from a local inspector", Auth({{"Origin", "http://localhost:6274"}, {"MCP-Protocol-Version", "2025-06-18"}}),
       kPing, "application/json", 200},
      {"no token", {}, kPing, "application/json", 401},
      {"wrong token", {{"Authorization", "Bearer nope"}}, kPing, "application/json", 401},
      {"foreign origin, even with the token", Auth({{"Origin", "http://evil.example.com"}}), kPing, "application/json", 403},
      {"foreign origin without the token", {{"Origin", "http://evil.example.com"}}, kPing, "application/json", 403},
      {"unknown protocol version", Auth({{"MCP-Protocol-Version", "2024-01-01"}}), kPing, "application/json", 400},
      {"not JSON", Auth(), kPing, "text/plain", 415},
      {"a parse error", Auth(), "{", "application/json", 400},
      {"a batch", Auth(), absl::StrCat("[", kPing, "]"), "application/json", 400},
      {"a notification", Auth(), R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "application/json", 202},
      {"an unknown method (its error in a 200)", Auth(), R"({"jsonrpc":"2.0","id":2,"method":"x"})", "application/json", 200},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      httplib::Result r = route.Post(row.headers, row.body, row.type);
      REQUIRE(r);
      CHECK(r->status == row.status);
      if (row.status != 202) CHECK(nlohmann::json::parse(r->body)["jsonrpc"] == "2.0");
    }
  }
  SECTION("the errors' codes") {
    CHECK(JsonRpcCode(route.Post(Auth(), "{")) == kParseError);
    CHECK(JsonRpcCode(route.Post(Auth(), R"({"jsonrpc":"2.0","id":2,"method":"x"})")) == kMethodNotFound);
  }
  SECTION("GET and DELETE: no stream, no sessions") {
    httplib::Client client("127.0.0.1", route.port);
    CHECK(client.Get("/mcp", Auth())->status == 405);
    CHECK(client.Delete("/mcp", Auth())->status == 405);
  }
  // Still serving after all of it.
  CHECK(route.Post(Auth())->status == 200);
}

// A 2026-07-28 request as its client sends it: the envelope in the body, its mirror in the headers.
struct ModernPost {
  std::string method;
  nlohmann::json params = nlohmann::json::object();
  std::string version = "2026-07-28";
  std::string body() const {
    nlohmann::json with_meta = params;
    with_meta["_meta"] = {{kProtocolVersionKey, version}, {kClientCapabilitiesKey, nlohmann::json::object()}};
    return nlohmann::json{{"jsonrpc", "2.0"}, {"id", 21}, {"method", method}, {"params", with_meta}}.dump();
  }
  httplib::Headers headers() const {
    httplib::Headers h = Auth({{"MCP-Protocol-Version", version}, {"Mcp-Method", method}});
    if (params.contains("name")) h.emplace("Mcp-Name", params["name"].get<std::string>());
    if (params.contains("uri")) h.emplace("Mcp-Name", params["uri"].get<std::string>());
    return h;
  }
};

TEST_CASE("POST /mcp serves revision 2026-07-28 beside 2025-11-25, with its statuses", "[mcp][http]") {
  Route route;
  SECTION("server/discover, a tool, the prompt") {
    for (const ModernPost& post : {ModernPost{"server/discover"}, ModernPost{"tools/list"},
                                   ModernPost{"tools/call", {{"name", "list_decisions"}, {"arguments", {{"limit", 1}}}}},
                                   ModernPost{"prompts/get", {{"name", "diagnose-pending-gpu-pod"},
                                                              {"arguments", {{"pod", "ml/a"}}}}}}) {
      CAPTURE(post.method);
      httplib::Result r = route.Post(post.headers(), post.body());
      REQUIRE(r);
      CHECK(r->status == 200);
      const nlohmann::json reply = nlohmann::json::parse(r->body);
      CHECK(reply["id"] == 21);
      CHECK(reply["result"]["resultType"] == "complete");
    }
  }
  SECTION("the MCP-Protocol-Version header of 2026-07-28 is no longer a 400 by itself") {
    const ModernPost discover{"server/discover"};
    const nlohmann::json reply = nlohmann::json::parse(route.Post(discover.headers(), discover.body())->body);
    CHECK(reply["result"]["supportedVersions"] == nlohmann::json::array({"2026-07-28"}));
  }
  struct Row {
    const char* name;
    httplib::Headers headers;
    std::string body;
    int status;
    int code;
  };
  const ModernPost call{"tools/call", {{"name", "list_decisions"}}};
  const ModernPost future{"tools/list", nlohmann::json::object(), "2027-01-01"};
  const ModernPost old{"tools/list", nlohmann::json::object(), "1900-01-01"};
  httplib::Headers no_method = call.headers();
  no_method.erase("Mcp-Method");
  httplib::Headers other_name = call.headers();
  other_name.erase("Mcp-Name");
  other_name.emplace("Mcp-Name", "get_decision");
  httplib::Headers no_version = call.headers();
  no_version.erase("MCP-Protocol-Version");
  httplib::Headers base64_name = call.headers();
  base64_name.erase("Mcp-Name");
  base64_name.emplace("Mcp-Name", "=?base64?bGlzdF9kZWNpc2lvbnM=?=");
  const Row rows[] = {
      {"Mcp-Name in the Base64 sentinel", base64_name, call.body(), 200, 0},
      {"an unknown method: 404 with its -32601", ModernPost{"tools/delete"}.headers(), ModernPost{"tools/delete"}.body(),
       404, kMethodNotFound},
      {"the removed initialize: 404", ModernPost{"initialize"}.headers(), ModernPost{"initialize"}.body(), 404,
       kMethodNotFound},
      {"the removed ping: 404", ModernPost{"ping"}.headers(), ModernPost{"ping"}.body(), 404, kMethodNotFound},
      {"a later revision: 400 with the supported ones", future.headers(), future.body(), 400, kUnsupportedProtocolVersion},
      {"an earlier one named in _meta: 400 with the supported ones", old.headers(), old.body(), 400,
       kUnsupportedProtocolVersion},
      {"no Mcp-Method", no_method, call.body(), 400, kHeaderMismatch},
      {"another tool in Mcp-Name", other_name, call.body(), 400, kHeaderMismatch},
      {"the envelope without the MCP-Protocol-Version header", no_version, call.body(), 400, kHeaderMismatch},
      {"the 2026 header without the envelope", Auth({{"MCP-Protocol-Version", "2026-07-28"}, {"Mcp-Method", "ping"}}),
       kPing, 400, kInvalidParams},
      {"an unknown tool: the error in a 200", ModernPost{"tools/call", {{"name", "nope"}}}.headers(),
       ModernPost{"tools/call", {{"name", "nope"}}}.body(), 200, kInvalidParams},
      {"a resource that does not exist: invalid params in a 200",
       ModernPost{"resources/read", {{"uri", "topofit://nothing"}}}.headers(),
       ModernPost{"resources/read", {{"uri", "topofit://nothing"}}}.body(), 200, kInvalidParams},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      httplib::Result r = route.Post(row.headers, row.body);
      REQUIRE(r);
      CHECK(r->status == row.status);
      const nlohmann::json reply = nlohmann::json::parse(r->body);
      CHECK(reply["id"] == (row.body == kPing ? 1 : 21));  // every error names its request
      if (row.code == 0) {
        CHECK(reply.contains("result"));
      } else {
        CHECK(JsonRpcCode(r) == row.code);
      }
    }
  }
  SECTION("a 2026 notification is accepted") {
    const nlohmann::json note = {{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"},
                                 {"params", {{"requestId", 1}, {"_meta", {{kProtocolVersionKey, "2026-07-28"}}}}}};
    CHECK(route.Post(Auth({{"MCP-Protocol-Version", "2026-07-28"}}), note.dump())->status == 202);
  }
  SECTION("2025-11-25 clients beside it, answered as before") {
    httplib::Result r = route.Post(Auth({{"MCP-Protocol-Version", "2025-11-25"}}));
    REQUIRE(r);
    CHECK(r->status == 200);
    CHECK(nlohmann::json::parse(r->body) == nlohmann::json::parse(R"({"jsonrpc":"2.0","id":1,"result":{}})"));
    httplib::Result unknown = route.Post(Auth(), R"({"jsonrpc":"2.0","id":2,"method":"x"})");
    CHECK(unknown->status == 200);  // not 2026's 404
  }
}

TEST_CASE("/mcp is disabled without an admin token", "[mcp][http]") {
  Route route({""});
  CHECK(route.Post({{"Authorization", "Bearer "}})->status == 403);
}

// The ops port listens on every address for probes and Prometheus; /mcp answers loopback peers only unless
// --mcp-beyond-loopback, and then still with the admin token.
TEST_CASE("/mcp answers peers beyond loopback only when told to", "[mcp][http]") {
  const std::optional<std::string> address = server::testing::NonLoopbackAddress();
  if (!address) {
    WARN("skipped: this machine has no IPv4 address other than loopback to call from");
    return;
  }
  SECTION("by default: 403 beyond loopback, even with the token; 200 on loopback") {
    Route route({kToken}, "0.0.0.0");
    httplib::Result remote = route.Post(Auth(), kPing, "application/json", *address);
    REQUIRE(remote);
    CHECK(remote->status == 403);
    const nlohmann::json error = nlohmann::json::parse(remote->body);
    CHECK(error["error"]["code"] == kInvalidRequest);
    CHECK_THAT(error["error"]["message"].get<std::string>(), Catch::Contains("--mcp-beyond-loopback"));
    CHECK(route.Post(Auth())->status == 200);
  }
  SECTION("--mcp-beyond-loopback: the token decides") {
    Route route({kToken, /*beyond_loopback=*/true}, "0.0.0.0");
    CHECK(route.Post(Auth(), kPing, "application/json", *address)->status == 200);
    CHECK(route.Post({}, kPing, "application/json", *address)->status == 401);
  }
}

}  // namespace
}  // namespace topofit::mcp
