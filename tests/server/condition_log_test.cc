#include "server/condition_log.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "tests/server/captured_log.h"
#include "tests/server/fake_clock.h"

namespace topofit::server {
namespace {

TEST_CASE("A failure is logged once per change, not per attempt, the recovery once, with the count",
          "[condition_log]") {
  CapturedLog c;
  FakeClock clock;
  ConditionLog watch(*c.logger, clock, "watch", {{"resource", "nodes"}});
  watch.Succeeded();  // healthy: nothing to say
  CHECK(c.Lines().empty());

  for (int i = 0; i < 5; ++i) {  // five attempts, 2 s apart, failing alike: one line
    watch.Failed("connection refused", absl::Seconds(2));
    clock.Advance(absl::Seconds(2));
  }
  watch.Failed("403 Forbidden", absl::Seconds(4));  // another reason: a line
  clock.Advance(absl::Seconds(4));
  watch.Succeeded();
  watch.Succeeded();  // already healthy: nothing
  const std::vector<nlohmann::json> lines = c.Lines();
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["msg"] == "watch_failing");
  CHECK(lines[0]["level"] == "warning");
  CHECK(lines[0]["resource"] == "nodes");
  CHECK(lines[0]["reason"] == "connection refused");
  CHECK(lines[0]["retry_in_seconds"] == 2.0);  // a number, not "2"
  CHECK(lines[1]["reason"] == "403 Forbidden");
  CHECK(lines[2]["msg"] == "watch_recovered");
  CHECK(lines[2]["level"] == "info");
  CHECK(lines[2]["failed_attempts"] == 6);
  CHECK(lines[2]["failing_seconds"] == 14);  // 5 x 2 s + 4 s
  CHECK_FALSE(watch.failing());
}

TEST_CASE("A failure that goes on is recalled after 30 s, then at doubling intervals up to 10 min",
          "[condition_log]") {
  CapturedLog c;
  FakeClock clock;
  ConditionLog api(*c.logger, clock, "kube_api", {});
  // An attempt every second for 20 minutes.
  std::vector<int64_t> logged_at;  // seconds since the first failure
  for (int s = 0; s <= 20 * 60; ++s) {
    const size_t before = c.Lines().size();
    api.Failed("GET 503");
    if (c.Lines().size() > before) logged_at.push_back(s);
    clock.Advance(absl::Seconds(1));
  }
  // 0, +30 s, +60 s, +120 s, +240 s, +480 s, then +600 s (capped).
  CHECK(logged_at == std::vector<int64_t>{0, 30, 90, 210, 450, 930});
  const std::vector<nlohmann::json> lines = c.Lines();
  CHECK(lines[1]["failed_attempts"] == 31);
  CHECK(lines[1]["failing_seconds"] == 30);
  CHECK_FALSE(lines[0].contains("failed_attempts"));
}

}  // namespace
}  // namespace topofit::server
