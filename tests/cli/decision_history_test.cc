#include "cli/decision_history.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <spdlog/sinks/null_sink.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "history/from_decisions.h"
#include "tests/cli/scratch_dir.h"

namespace topofit::cli {
namespace {

// The value of the sample line that starts with `series` ("name" or "name{labels}") in `text`; -1 when absent.
double Sample(const std::string& text, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    double value = 0;
    if (absl::ConsumePrefix(&line, absl::StrCat(series, " ")) && absl::SimpleAtod(line, &value)) return value;
  }
  return -1;
}

TEST_CASE("the decision history's byte cap flag takes bytes or a size with its unit, at least 32 MiB",
          "[cli][history]") {
  struct Row {
    const char* name;
    const char* value;
    int64_t bytes;  // 0: refused
  };
  const std::vector<Row> rows = {
      {"plain bytes", "33554432", int64_t{32} << 20},
      {"MiB", "64MiB", int64_t{64} << 20},
      {"MB: 1024 KiB here, unlike Kubernetes' M", "64MB", int64_t{64} << 20},
      {"GiB", "2GiB", int64_t{2} << 30},
      {"below 32 MiB", "16MiB", 0},
      {"negative", "-1", 0},
      {"not a size", "lots", 0},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      CLI::App app;
      std::string path;
      int64_t max_bytes = history::kDefaultMaxBytes;
      AddDecisionDbFlag(app, path, max_bytes);
      const std::string args = absl::StrCat("--decision-db-max-bytes ", row.value);
      if (row.bytes == 0) {
        CHECK_THROWS_AS(app.parse(args, false), CLI::ParseError);
      } else {
        app.parse(args, false);
        CHECK(max_bytes == row.bytes);
      }
    }
  }
}

TEST_CASE("the decision database's bytes are a metric, measured after each batch", "[cli][history]") {
  testing::ScratchDir scratch("topofit-decision-history-test");
  const std::string path = scratch.path("decisions.db");
  server::MetricsRegistry registry;
  spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  DecisionHistory history = OpenDecisionHistory(path, history::kMinMaxBytes, registry, log);
  REQUIRE(history.recorder != nullptr);
  const double opened = Sample(registry.Render(), "topofit_decision_db_bytes");
  CHECK(opened > 0);  // the schema's pages
  for (int i = 0; i < 200; ++i) {
    const std::string uid = absl::StrCat("uid-", i);
    history.recorder->Record(history::BindRecord(absl::FromUnixSeconds(1'750'000'000 + i), {uid, absl::StrCat("ml/p", i)},
                                                 "node-1", 8, "0,1,2,3,4,5,6,7", true));
  }
  history.recorder->Flush();
  const std::string metrics = registry.Render();
  const auto on_disk = static_cast<double>(std::filesystem::file_size(path) + std::filesystem::file_size(path + "-wal"));
  CHECK(Sample(metrics, "topofit_decision_db_bytes") == on_disk);
  CHECK(on_disk > opened);
  CHECK(Sample(metrics, "topofit_decisions_written_total") == 200);
}

}  // namespace
}  // namespace topofit::cli
