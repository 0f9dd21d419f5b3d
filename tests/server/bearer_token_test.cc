#include "server/bearer_token.h"

#include <catch2/catch.hpp>

#include <memory>
#include <optional>
#include <string>

#include <httplib.h>

#include "server/http_server.h"
#include "server/metrics.h"
#include "tests/server/non_loopback_address.h"

namespace topofit::server {
namespace {

constexpr char kToken[] = "s3cret";

HttpResponse Pods(const HttpRequest&) { return HttpResponse{200, "application/json", "[\"ns/pod\"]"}; }

HttpRequest Request(bool from_loopback, std::string authorization = "") {
  HttpRequest request;
  request.method = "GET";
  request.path = "/preferences";
  request.from_loopback = from_loopback;
  if (!authorization.empty()) request.headers.emplace("Authorization", std::move(authorization));
  return request;
}

TEST_CASE("Loopback or admin token: who may read an endpoint that reveals pods", "[bearer_token]") {
  const HttpHandler guarded = RequireLoopbackOrAdminToken(kToken, Pods);
  const HttpHandler no_token = RequireLoopbackOrAdminToken("", Pods);
  SECTION("on loopback, no token needed") {
    CHECK(guarded(Request(true)).status == 200);
    CHECK(no_token(Request(true)).status == 200);
  }
  SECTION("beyond loopback: 401 without the token or with a wrong one, 200 with it") {
    CHECK(guarded(Request(false)).status == 401);
    CHECK(guarded(Request(false, "Bearer s3cre")).status == 401);
    CHECK(guarded(Request(false, "Bearer s3cret")).status == 200);
  }
  SECTION("beyond loopback with no token configured: 403, saying how to open it") {
    const HttpResponse out = no_token(Request(false, "Bearer s3cret"));
    CHECK(out.status == 403);
    CHECK(out.body.find("loopback only") != std::string::npos);
  }
}

TEST_CASE("Admin token: 403 when disabled, 401 without it, even on loopback", "[bearer_token]") {
  CHECK(RequireAdminToken("", Pods)(Request(true, "Bearer x")).status == 403);
  CHECK(RequireAdminToken(kToken, Pods)(Request(true)).status == 401);
  CHECK(RequireAdminToken(kToken, Pods)(Request(true, "Bearer s3cret")).status == 200);
}

TEST_CASE("The server tells loopback callers from others by their address", "[bearer_token][http]") {
  MetricsRegistry registry;
  HttpServerOptions options;
  options.address = "0.0.0.0";
  options.name = "ops";
  std::unique_ptr<HttpServer> server = *HttpServer::Create(options, registry);
  server->Handle("GET", "/preferences", RequireLoopbackOrAdminToken(kToken, Pods));
  const int port = *server->Start();

  httplib::Client local("127.0.0.1", port);
  auto on_loopback = local.Get("/preferences");
  REQUIRE(on_loopback);
  CHECK(on_loopback->status == 200);

  const std::optional<std::string> address = testing::NonLoopbackAddress();
  if (!address) {
    WARN("skipped the caller beyond loopback: this machine has no IPv4 address other than loopback");
    return;
  }
  httplib::Client remote(*address, port);
  auto without = remote.Get("/preferences");
  REQUIRE(without);
  CHECK(without->status == 401);
  auto with = remote.Get("/preferences", httplib::Headers{{"Authorization", "Bearer s3cret"}});
  REQUIRE(with);
  CHECK(with->status == 200);
}

}  // namespace
}  // namespace topofit::server
