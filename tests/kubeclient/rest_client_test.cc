#include "kubeclient/rest_client.h"

#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "kubeclient/token_bucket.h"
#include "tests/codec/hostile_json.h"
#include "tests/kube/status_matchers.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/fake_clock.h"

namespace topofit::kubeclient {
namespace {

using testing::ConfigFor;
using testing::FakeApiServer;
using testing::StatusJson;

// Time that moves only when the client sleeps, and a scripted random source: retries and rate limits run
// instantly and give the same delays every run.
struct FakeTime {
  server::FakeClock clock;
  std::vector<absl::Duration> sleeps;
  std::deque<double> randoms;

  RestOptions Options() {
    RestOptions options;
    options.clock = &clock;
    options.sleep = [this](absl::Duration d) {
      sleeps.push_back(d);
      clock.Advance(d);
    };
    options.uniform_random = [this] {
      if (randoms.empty()) return 0.5;
      const double r = randoms.front();
      randoms.pop_front();
      return r;
    };
    options.qps = 0;  // unlimited unless a test sets it
    return options;
  }
};

std::unique_ptr<topofit::testing::TestCerts> MakeCerts() {
  auto certs = topofit::testing::TestCerts::Create();
  REQUIRE_OK(certs);
  return *std::move(certs);
}

TEST_CASE("HTTP status maps to a status code with the API server's message", "[rest]") {
  struct Case {
    int http;
    std::string reason;
    absl::StatusCode code;
  };
  const std::vector<Case> cases = {
      {400, "BadRequest", absl::StatusCode::kInvalidArgument},
      {401, "Unauthorized", absl::StatusCode::kUnauthenticated},
      {403, "Forbidden", absl::StatusCode::kPermissionDenied},
      {404, "NotFound", absl::StatusCode::kNotFound},
      {409, "AlreadyExists", absl::StatusCode::kAlreadyExists},
      {409, "Conflict", absl::StatusCode::kAborted},
      {410, "Expired", absl::StatusCode::kFailedPrecondition},
      {422, "Invalid", absl::StatusCode::kInvalidArgument},
      {429, "TooManyRequests", absl::StatusCode::kResourceExhausted},
      {500, "InternalError", absl::StatusCode::kUnavailable},
      {503, "ServiceUnavailable", absl::StatusCode::kUnavailable},
      {504, "Timeout", absl::StatusCode::kUnavailable},
  };
  for (const Case& c : cases) {
    INFO(c.http << " " << c.reason);
    CHECK_STATUS(StatusFromHttp(c.http, StatusJson(c.http, c.reason, "the server said why")), c.code,
                 "the server said why");
  }
  REQUIRE_OK(StatusFromHttp(201, "{}"));
  // Not a Status, e.g. from a load balancer: the start of the body stands in for the message.
  CHECK_STATUS(StatusFromHttp(502, "<html>Bad Gateway</html>"), absl::StatusCode::kUnavailable, "Bad Gateway");
  // Nor is a Status beyond the JSON limits read (codec/json_limits.h): its start stands in too.
  const std::string deep = topofit::testing::WithRawMember(nlohmann::json::parse(StatusJson(500, "InternalError", "m")),
                                                           "x", topofit::testing::NestedArrays(100'000));
  CHECK_STATUS(StatusFromHttp(500, deep), absl::StatusCode::kUnavailable, R"(HTTP 500: {")");
}

TEST_CASE("path segments are escaped", "[rest]") {
  CHECK(EscapePathSegment("kube-system") == "kube-system");
  CHECK(EscapePathSegment("a/b c?d%") == "a%2Fb%20c%3Fd%25");
  CHECK(EscapePathSegment("..") == "..");  // unreserved; the API server rejects such names anyway
}

TEST_CASE("token bucket: burst, then qps", "[rest]") {
  const absl::Duration t0 = absl::Seconds(100);  // monotonic time
  TokenBucket bucket(/*qps=*/2, /*burst=*/2, t0);
  CHECK(bucket.Reserve(t0) == absl::ZeroDuration());
  CHECK(bucket.Reserve(t0) == absl::ZeroDuration());
  CHECK(bucket.Reserve(t0) == absl::Milliseconds(500));  // one token in debt at 2/s
  CHECK(bucket.Reserve(t0) == absl::Seconds(1));         // two in debt
  // 3 s later the bucket holds min(burst 2, debt -2 + 3 s * 2/s) = 2 tokens: two more go without waiting.
  CHECK(bucket.Reserve(t0 + absl::Seconds(3)) == absl::ZeroDuration());
  CHECK(bucket.Reserve(t0 + absl::Seconds(3)) == absl::ZeroDuration());
  TokenBucket unlimited(0, 1, t0);
  for (int i = 0; i < 100; ++i) REQUIRE(unlimited.Reserve(t0) == absl::ZeroDuration());
}

TEST_CASE("REST over TLS against the fake API server", "[rest]") {
  const auto certs = MakeCerts();
  FakeApiServer server(*certs);
  REQUIRE(server.valid());
  FakeTime time;
  RestOptions options = time.Options();
  options.max_attempts = 3;

  SECTION("GET sends the token and Accept, and parses the body") {
    server.Script(200, R"({"kind":"Pod","metadata":{"name":"p"}})");
    auto rest = RestClient::Create(ConfigFor(server, *certs), options);
    REQUIRE_OK(rest);
    const absl::StatusOr<nlohmann::json> json = (*rest)->Get("/api/v1/namespaces/ns/pods/p");
    REQUIRE_OK(json);
    CHECK((*json)["metadata"]["name"] == "p");
    const auto requests = server.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].method == "GET");
    CHECK(requests[0].target == "/api/v1/namespaces/ns/pods/p");
    CHECK(requests[0].Header("Authorization") == "Bearer test-token");
    CHECK(requests[0].Header("Accept") == "application/json");
    CHECK(time.sleeps.empty());
  }

  SECTION("a server URL with a path prefix (behind a proxy) prefixes every request") {
    ClusterConfig config = ConfigFor(server, *certs);
    config.server += "/k8s/clusters/c-1/";
    server.Script(200, "{}");
    auto rest = RestClient::Create(config, options);
    REQUIRE_OK(rest);
    REQUIRE_OK((*rest)->Get("/api/v1/nodes"));
    CHECK(server.requests().at(0).target == "/k8s/clusters/c-1/api/v1/nodes");
  }

  SECTION("429 with Retry-After is retried after exactly that long") {
    server.Script(429, StatusJson(429, "TooManyRequests", "too many requests, please try again later"),
                  {{"Retry-After", "3"}});
    server.Script(200, R"({"ok":true})");
    auto rest = RestClient::Create(ConfigFor(server, *certs), options);
    REQUIRE_OK(rest);
    const absl::StatusOr<nlohmann::json> json = (*rest)->Get("/api/v1/pods");
    REQUIRE_OK(json);
    CHECK((*json)["ok"] == true);
    CHECK(server.requests().size() == 2);
    CHECK(time.sleeps == std::vector<absl::Duration>{absl::Seconds(3)});
  }

  SECTION("500 on every attempt gives Unavailable after max_attempts, backing off with jitter") {
    for (int i = 0; i < 5; ++i) server.Script(500, StatusJson(500, "InternalError", "etcd is sad"));
    time.randoms = {0.0, 1.0};
    auto rest = RestClient::Create(ConfigFor(server, *certs), options);
    REQUIRE_OK(rest);
    const absl::StatusOr<nlohmann::json> json = (*rest)->Post("/api/v1/namespaces/ns/pods/p/binding", {});
    CHECK_STATUS(json, absl::StatusCode::kUnavailable, "etcd is sad");
    CHECK_STATUS(json, absl::StatusCode::kUnavailable, "after 3 attempts");
    CHECK(server.requests().size() == 3);
    // Equal jitter: step/2 + step/2 * random. Attempt 1: step 200 ms, random 0 -> 100 ms.
    // Attempt 2: step 400 ms, random 1 -> 200 + 200 = 400 ms. No sleep after the last attempt.
    CHECK(time.sleeps == std::vector<absl::Duration>{absl::Milliseconds(100), absl::Milliseconds(400)});
  }

  SECTION("a 4xx other than 429 is not retried") {
    server.Script(403, StatusJson(403, "Forbidden", "pods \"p\" is forbidden: User cannot get"));
    auto rest = RestClient::Create(ConfigFor(server, *certs), options);
    REQUIRE_OK(rest);
    CHECK_STATUS((*rest)->Get("/api/v1/namespaces/ns/pods/p"), absl::StatusCode::kPermissionDenied,
                 "is forbidden");
    CHECK(server.requests().size() == 1);
  }

  SECTION("a CA that did not sign the server's certificate is a TLS error, not retried") {
    ClusterConfig config = ConfigFor(server, *certs);
    config.ca_pem = ReadFileToString(certs->stranger_cert_file()).value();
    auto rest = RestClient::Create(config, options);
    REQUIRE_OK(rest);
    CHECK_STATUS((*rest)->Get("/api/v1/pods"), absl::StatusCode::kUnavailable, "TLS");
    CHECK(server.requests().empty());
    CHECK(time.sleeps.empty());
  }

  SECTION("insecure-skip-tls-verify connects whatever the CA") {
    ClusterConfig config = ConfigFor(server, *certs);
    config.ca_pem.clear();
    config.insecure_skip_tls_verify = true;
    server.Script(200, "{}");
    auto rest = RestClient::Create(config, options);
    REQUIRE_OK(rest);
    REQUIRE_OK((*rest)->Get("/version"));
  }

  SECTION("qps limit: a burst, then one request per 1/qps seconds") {
    options.qps = 2;
    options.burst = 1;
    for (int i = 0; i < 3; ++i) server.Script(200, "{}");
    auto rest = RestClient::Create(ConfigFor(server, *certs), options);
    REQUIRE_OK(rest);
    for (int i = 0; i < 3; ++i) REQUIRE_OK((*rest)->Get("/api"));
    CHECK(time.sleeps == std::vector<absl::Duration>{absl::Milliseconds(500), absl::Milliseconds(500)});
  }

  SECTION("the token is re-read from its file once a minute") {
    const std::string token_file = certs->dir() + "/token";
    std::ofstream(token_file) << "first\n";
    ClusterConfig config = ConfigFor(server, *certs);
    config.bearer_token = "first";
    config.bearer_token_file = token_file;
    for (int i = 0; i < 3; ++i) server.Script(200, "{}");
    auto rest = RestClient::Create(config, options);
    REQUIRE_OK(rest);
    std::ofstream(token_file) << "second\n";
    REQUIRE_OK((*rest)->Get("/api"));
    time.clock.Advance(absl::Seconds(61));
    REQUIRE_OK((*rest)->Get("/api"));
    const auto requests = server.requests();
    CHECK(requests.at(0).Header("Authorization") == "Bearer first");
    CHECK(requests.at(1).Header("Authorization") == "Bearer second");
  }

  SECTION("a body that is not JSON is an error") {
    server.Script(200, "not json");
    auto rest = RestClient::Create(ConfigFor(server, *certs), options);
    REQUIRE_OK(rest);
    CHECK_STATUS((*rest)->Get("/api"), absl::StatusCode::kDataLoss, "GET /api: response body: malformed JSON");
  }

  SECTION("a body beyond the JSON limits is refused before a document is built from it") {
    server.Script(200, topofit::testing::WithRawMember({{"kind", "Pod"}, {"metadata", {{"name", "p"}}}}, "x",
                                                       topofit::testing::NestedArrays(100'000)));
    auto rest = RestClient::Create(ConfigFor(server, *certs), options);
    REQUIRE_OK(rest);
    CHECK_STATUS((*rest)->Get("/api/v1/namespaces/ns/pods/p"), absl::StatusCode::kDataLoss,
                 "GET /api/v1/namespaces/ns/pods/p: response body: JSON nested deeper than 64 levels");
    CHECK(server.requests().size() == 1);  // not retried: the same reply would come back
  }
}

TEST_CASE("a request in flight does not hold up another: each takes a connection of its own", "[rest]") {
  const auto certs = MakeCerts();
  FakeApiServer server(*certs);
  REQUIRE(server.valid());
  FakeTime time;
  auto rest = RestClient::Create(ConfigFor(server, *certs), time.Options());
  REQUIRE_OK(rest);
  const std::string second = "/api/v1/namespaces/ns/pods/second";
  std::atomic<bool> first_arrived{false};
  std::atomic<bool> second_answered_meanwhile{false};
  // The first GET is held at the server until the second has been answered. On one shared connection
  // the second could not be sent before the first's reply: the wait would end only at its 10 s limit.
  server.BeforeNext("GET", [&] {
    first_arrived = true;
    const absl::Time give_up = absl::Now() + absl::Seconds(10);
    while (absl::Now() < give_up && !second_answered_meanwhile) {
      for (const testing::RecordedRequest& request : server.requests()) {
        if (request.target == second) second_answered_meanwhile = true;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
  });
  std::thread first([&] { (void)(*rest)->Get("/api/v1/namespaces/ns/pods/first"); });
  while (!first_arrived) absl::SleepFor(absl::Milliseconds(1));
  (void)(*rest)->Get(second);
  first.join();
  CHECK(second_answered_meanwhile);
}

TEST_CASE("client certificates from memory (mutual TLS)", "[rest]") {
  const auto certs = MakeCerts();
  const std::string client_ca = certs->ca_cert_file();
  FakeApiServer server(*certs, client_ca.c_str());
  REQUIRE(server.valid());
  FakeTime time;
  ClusterConfig config = ConfigFor(server, *certs);
  config.bearer_token.clear();

  SECTION("with the certificate the server accepts it") {
    config.client_cert_pem = ReadFileToString(certs->client_cert_file()).value();
    config.client_key_pem = ReadFileToString(certs->client_key_file()).value();
    server.Script(200, "{}");
    auto rest = RestClient::Create(config, time.Options());
    REQUIRE_OK(rest);
    REQUIRE_OK((*rest)->Get("/api"));
    CHECK(server.requests().at(0).Header("Authorization").empty());
  }
  SECTION("without it the handshake fails") {
    RestOptions options = time.Options();
    options.max_attempts = 1;
    auto rest = RestClient::Create(config, options);
    REQUIRE_OK(rest);
    CHECK_STATUS((*rest)->Get("/api"), absl::StatusCode::kUnavailable, "");
    CHECK(server.requests().empty());
  }
  SECTION("a key that does not match the certificate is refused up front") {
    config.client_cert_pem = ReadFileToString(certs->client_cert_file()).value();
    config.client_key_pem = ReadFileToString(certs->stranger_key_file()).value();
    CHECK_STATUS(RestClient::Create(config, time.Options()), absl::StatusCode::kInvalidArgument, "client key");
  }
}

TEST_CASE("connection failures: GET is retried, POST is not", "[rest]") {
  // A port nothing listens on: bind one without listening, note it, close it.
  int port = 0;
  {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), len) == 0);
    REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port = ntohs(addr.sin_port);
    close(fd);
  }
  FakeTime time;
  RestOptions options = time.Options();
  options.max_attempts = 3;
  options.timeout = absl::Seconds(1);  // a refused connection fails at once; this only bounds a surprise
  ClusterConfig config;
  config.server = absl::StrCat("http://127.0.0.1:", port);
  auto rest = RestClient::Create(config, options);
  REQUIRE_OK(rest);
  CHECK_STATUS((*rest)->Get("/api"), absl::StatusCode::kUnavailable, "cannot reach API server");
  CHECK(time.sleeps.size() == 2);
  time.sleeps.clear();
  CHECK_STATUS((*rest)->Post("/api/v1/namespaces/ns/pods/p/binding", {}), absl::StatusCode::kUnavailable,
               "cannot reach API server");
  CHECK(time.sleeps.empty());
}

TEST_CASE("bad cluster configs fail at creation", "[rest]") {
  ClusterConfig config;
  config.server = "ftp://h";
  CHECK_STATUS(RestClient::Create(config), absl::StatusCode::kInvalidArgument, "scheme");
  config.server = "https://h:99999";
  CHECK_STATUS(RestClient::Create(config), absl::StatusCode::kInvalidArgument, "port");
  config.server = "https://h";
  config.ca_pem = "not a certificate";
  CHECK_STATUS(RestClient::Create(config), absl::StatusCode::kInvalidArgument, "no PEM certificate");
}

}  // namespace
}  // namespace topofit::kubeclient
