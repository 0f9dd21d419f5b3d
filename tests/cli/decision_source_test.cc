#include "cli/decision_source.h"

#include <httplib.h>

#include <chrono>
#include <string>
#include <thread>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "history/decisions_http.h"
#include "history/from_decisions.h"
#include "tests/codec/hostile_json.h"
#include "tests/kube/status_matchers.h"

namespace topofit::cli {
namespace {

// `topofit explain --server` reads pages of decisions from an extender's ops port: a page beyond the
// limits (codec/json_limits.h) is refused before a document is built from it, and nothing of it is read.
TEST_CASE("decisions from --server: a page beyond the JSON limits is refused, not read", "[cli][history]") {
  history::DecisionPage one;
  one.records.push_back(history::BindRecord(absl::FromUnixSeconds(1'750'000'000), {"uid-1", "ml/p"}, "node-1", 8,
                                            "0,1,2,3,4,5,6,7", true));
  const nlohmann::json page = history::DecisionPageToJson(one);
  std::string reply;
  httplib::Server server;
  server.Get("/decisions", [&reply](const httplib::Request&, httplib::Response& res) {
    res.set_content(reply, "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  REQUIRE(port > 0);
  std::thread serving([&server] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  absl::StatusOr<DecisionSource> source = OpenDecisionSource(absl::StrCat("http://127.0.0.1:", port), "", "");
  REQUIRE_OK(source);
  history::DecisionQuery query;
  query.limit = 10;

  reply = page.dump();
  absl::StatusOr<history::DecisionPage> read = source->pages(query);
  REQUIRE_OK(read);
  CHECK(read->records.size() == 1);

  reply = topofit::testing::WithRawMember(page, "x", topofit::testing::NestedArrays(100'000));
  CHECK_STATUS(source->pages(query), absl::StatusCode::kInvalidArgument,
               absl::StrCat("http://127.0.0.1:", port, "/decisions: JSON nested deeper than 64 levels"));
  server.stop();
  serving.join();
}

}  // namespace
}  // namespace topofit::cli
