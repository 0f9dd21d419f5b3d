#include "history/decisions_http.h"

#include <httplib.h>

#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "server/metrics.h"
#include "tests/kube/status_matchers.h"

namespace topofit::history {
namespace {

constexpr char kToken[] = "decisions-token";

Record Filter(int i) {
  Record r;
  r.time = absl::FromUnixSeconds(1'750'000'000 + i);
  r.reason = Reason::kNoNodeFits;
  r.correlation_id = absl::StrCat("uid-", i % 2);
  r.pods = {{r.correlation_id, absl::StrCat("ml/p", i % 2)}};
  r.gpus = 4;
  r.candidates = {Candidate{.name = "g5-1", .reason = Reason::kMinLink, .unresolvable = true}};
  return r;
}

// The route on a real server on loopback, over `store` (null: unavailable).
struct Route {
  explicit Route(const DecisionStore* store, std::string token = kToken) {
    server::HttpServerOptions options;
    options.address = "127.0.0.1";
    options.name = "ops";
    server = server::HttpServer::Create(options, registry).value();
    RegisterDecisionsRoute(*server, store, std::move(token), "decision database x.db: file is not a database");
    port = server->Start().value();
  }
  ~Route() { server->Stop(); }
  httplib::Result Get(const std::string& target, bool with_token = true) {
    httplib::Client client("127.0.0.1", port);
    httplib::Headers headers;
    if (with_token) headers.emplace("Authorization", absl::StrCat("Bearer ", kToken));
    return client.Get(target.c_str(), headers);
  }
  server::MetricsRegistry registry;
  std::unique_ptr<server::HttpServer> server;
  int port = 0;
};

TEST_CASE("GET /decisions pages a pod's decisions newest first and follows its cursor", "[history][http]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  std::vector<Record> records;
  for (int i = 0; i < 7; ++i) records.push_back(Filter(i));
  REQUIRE_OK((*store)->Append(records));
  Route route(store->get());

  httplib::Result first = route.Get("/decisions?pod=ml/p0&limit=3");
  REQUIRE(first);
  REQUIRE(first->status == 200);
  const nlohmann::json page = nlohmann::json::parse(first->body);
  REQUIRE(page["decisions"].size() == 3);
  CHECK(page["decisions"][0]["id"] == 7);  // records 6, 4, 2 of p0 (ids 7, 5, 3)
  CHECK(page["decisions"][2]["id"] == 3);
  CHECK(page["decisions"][0]["candidates"][0]["reason"] == "min-link");
  REQUIRE(page["nextCursor"] == "3");
  httplib::Result second = route.Get("/decisions?pod=ml/p0&limit=3&cursor=3");
  REQUIRE(second);
  const nlohmann::json rest = nlohmann::json::parse(second->body);
  REQUIRE(rest["decisions"].size() == 1);
  CHECK(rest["decisions"][0]["id"] == 1);
  CHECK_FALSE(rest.contains("nextCursor"));
  auto decoded = DecisionPageFromJson(page);
  REQUIRE_OK(decoded);
  CHECK(decoded->next_before_id == 3);
  CHECK(decoded->records[0].pods == std::vector<PodSubject>{{"uid-0", "ml/p0"}});
}

TEST_CASE("GET /decisions refuses bad parameters and callers without the token", "[history][http]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  Route route(store->get());
  struct Row {
    const char* name;
    std::string target;
    bool with_token;
    int status;
    const char* message;
  };
  const std::vector<Row> rows = {
      {"no token", "/decisions", false, 401, "bearer token"},
      {"a huge limit", "/decisions?limit=1000000", true, 400, "1..1000"},
      {"a limit that is no number", "/decisions?limit=ten", true, 400, "limit 'ten'"},
      {"a cursor it never gave", "/decisions?cursor=abc", true, 400, "cursor 'abc'"},
      {"a negative cursor", "/decisions?cursor=-4", true, 400, "cursor '-4'"},
      {"a time that is not RFC 3339", "/decisions?since=yesterday", true, 400, "since:"},
      {"an unknown parameter", "/decisions?pods=x", true, 400, "unknown parameter 'pods'"},
      {"a parameter twice", "/decisions?pod=a/b&pod=c/d", true, 400, "more than once"},
      {"all good", "/decisions?group=g&node=n&uid=u&since=2026-01-01T00:00:00Z&limit=5", true, 200, "decisions"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    httplib::Result reply = route.Get(row.target, row.with_token);
    REQUIRE(reply);
    CHECK(reply->status == row.status);
    CHECK_THAT(reply->body, Catch::Contains(row.message));
  }
}

TEST_CASE("GET /decisions is 403 without a configured token and 503 without a store", "[history][http]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  Route disabled(store->get(), "");
  CHECK(disabled.Get("/decisions")->status == 403);
  Route unavailable(nullptr);
  httplib::Result reply = unavailable.Get("/decisions");
  REQUIRE(reply);
  CHECK(reply->status == 503);
  CHECK_THAT(reply->body, Catch::Contains("file is not a database"));
}

}  // namespace
}  // namespace topofit::history
