#include "cli/explain_command.h"

#include <filesystem>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "history/from_decisions.h"
#include "history/store.h"
#include "tests/cli/scratch_dir.h"

namespace topofit::cli {
namespace {

// A decision database in a scratch directory holding idle records of two nodes (h100-3 twice).
struct IdleHistory : testing::ScratchDir {
  IdleHistory() : ScratchDir("topofit-explain-test") {
    auto store = history::DecisionStore::Open(path("decisions.db")).value();
    auto idle = [](const std::string& node, uint32_t mask, history::IdleReason reason, int n) {
      history::NodeIdleGpus out{.node = node, .node_group = "p5", .free = topology::GpuSet::FromMask(mask)};
      out.counts[static_cast<size_t>(reason)] = n;
      return out;
    };
    REQUIRE(store->Append({history::IdleRecord(absl::FromUnixSeconds(1'750'000'000),
                                               idle("h100-3", 0xff, history::IdleReason::kNoDemand, 8)),
                           history::IdleRecord(absl::FromUnixSeconds(1'750'000'010),
                                               idle("g5-2", 0xf, history::IdleReason::kHeldForIntent, 4)),
                           history::IdleRecord(absl::FromUnixSeconds(1'750'000'020),
                                               idle("h100-3", 0b01100110, history::IdleReason::kFragmented, 4))})
                .ok());
  }
  std::pair<int, std::string> Explain(const std::string& node, bool json) {
    ExplainOptions options;
    options.subject = "idle";
    options.name = node;
    options.db = path("decisions.db");
    options.json = json;
    std::ostringstream out, err;
    const int code = RunExplain(options, out, err);
    return {code, code == 0 ? out.str() : err.str()};
  }
};

TEST_CASE("explain idle tells each node's latest idle GPUs from a decision database", "[cli][explain]") {
  IdleHistory history;
  const auto [code, text] = history.Explain("", false);
  REQUIRE(code == 0);
  CHECK_THAT(text, Catch::StartsWith("8 idle GPUs on 2 node(s): 4 held-for-intent, 4 fragmented\n"));
  CHECK_THAT(text, Catch::Contains("h100-3 (p5): 4 free GPUs (1,2,5,6): 4 fragmented since"));

  const auto [json_code, json_text] = history.Explain("h100-3", true);
  REQUIRE(json_code == 0);
  const nlohmann::json doc = nlohmann::json::parse(json_text);
  CHECK(doc["idle"] == "h100-3");
  REQUIRE(doc["decisions"].size() == 2);
  CHECK(doc["decisions"][0]["reason"] == "fragmented");
  CHECK(doc["decisions"][1]["reason"] == "no-demand");
  CHECK(doc["decisions"][0]["text"] == "node h100-3 (p5): 4 free GPUs (1,2,5,6): 4 fragmented");
}

TEST_CASE("explain idle: nothing recorded is exit 2, a bad source exit 1", "[cli][explain]") {
  IdleHistory history;
  CHECK(history.Explain("nowhere", false) == std::pair<int, std::string>{2, "topofit explain: no idle GPUs recorded on node nowhere\n"});
  ExplainOptions options;
  options.subject = "idle";
  std::ostringstream out, err;
  CHECK(RunExplain(options, out, err) == 1);
  CHECK_THAT(err.str(), Catch::Contains("give one source"));

  // A --db that names no file is an error, and explain creates none there.
  options.db = history.path("typo.db");
  std::ostringstream missing;
  CHECK(RunExplain(options, out, missing) == 1);
  CHECK_THAT(missing.str(), Catch::Contains("typo.db: no decision database there"));
  CHECK_FALSE(std::filesystem::exists(history.path("typo.db")));
}

}  // namespace
}  // namespace topofit::cli
