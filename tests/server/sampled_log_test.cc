#include "server/sampled_log.h"

#include <catch2/catch.hpp>

#include <vector>

#include "nlohmann/json.hpp"
#include "tests/server/captured_log.h"
#include "tests/server/fake_clock.h"

namespace topofit::server {
namespace {

TEST_CASE("A frequent event is logged at once, then once per interval with the occurrences it stands for",
          "[sampled_log]") {
  CapturedLog c;
  FakeClock clock;
  SampledLog evictions(*c.logger, clock, "ledger_evicted", spdlog::level::warn, absl::Minutes(1));

  evictions.Occurred({{"kind", "preference"}, {"key", "uid-0"}});  // the first: at once
  for (int i = 1; i <= 479; ++i) {  // 8 a second for the rest of the minute: no line
    clock.Advance(absl::Milliseconds(125));
    evictions.Occurred({{"kind", "preference"}, {"key", "uid-" + std::to_string(i)}});
  }
  REQUIRE(c.Lines().size() == 1);
  clock.Advance(absl::Milliseconds(125));  // a minute after the first line
  evictions.Occurred({{"kind", "preference"}, {"key", "uid-480"}});
  clock.Advance(absl::Minutes(10));  // quiet, then one more: logged at once, standing for itself
  evictions.Occurred({{"kind", "preference"}, {"key", "uid-481"}});

  const std::vector<nlohmann::json> lines = c.Lines();
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["msg"] == "ledger_evicted");
  CHECK(lines[0]["level"] == "warning");
  CHECK(lines[0]["key"] == "uid-0");
  CHECK(lines[0]["occurrences"] == 1);
  CHECK(lines[1]["key"] == "uid-480");  // the latest one's fields
  CHECK(lines[1]["occurrences"] == 480);  // uid-1 .. uid-480
  CHECK(lines[2]["key"] == "uid-481");
  CHECK(lines[2]["occurrences"] == 1);
}

}  // namespace
}  // namespace topofit::server
