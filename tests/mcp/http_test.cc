#include "mcp/http.h"

#include <httplib.h>

#include <memory>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "mcp/json_rpc.h"
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
