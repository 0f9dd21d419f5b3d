#include "cli/bench_command.h"

#include <filesystem>
#include <sstream>

#include <catch2/catch.hpp>

#include "tests/cli/scratch_dir.h"

namespace topofit::cli {
namespace {

BenchOptions Small() {
  BenchOptions options;
  options.pods = 400;
  options.progress = false;
  return options;
}

TEST_CASE("topofit bench replays the synthetic default under every policy and prints the table", "[bench]") {
  std::ostringstream out, err;
  REQUIRE(RunBench(Small(), out, err) == 0);
  for (const char* row : {"baseline", "extender-only", "expander-only", "topofit", "GPU-hours provisioned",
                          "stranded scale-ups", "pending p95, all pods", "vs baseline"}) {
    CHECK(out.str().find(row) != std::string::npos);
  }
  CHECK(err.str().find("synthetic") != std::string::npos);
}

TEST_CASE("topofit bench is deterministic for a seed", "[bench]") {
  std::ostringstream a, b, err;
  BenchOptions options = Small();
  options.seed = 9;
  REQUIRE(RunBench(options, a, err) == 0);
  options.jobs = 1;  // parallel or not, the same replays
  REQUIRE(RunBench(options, b, err) == 0);
  CHECK(a.str() == b.str());
}

TEST_CASE("topofit bench --out writes the report files", "[bench]") {
  testing::ScratchDir scratch("topofit-bench-test");
  BenchOptions options = Small();
  options.policies = "baseline,topofit";
  options.out = scratch.path("report");
  std::ostringstream out, err;
  REQUIRE(RunBench(options, out, err) == 0);
  for (const char* file : {"summary.csv", "summary.json", "timeline.csv", "pending_cdf.csv"}) {
    CHECK(std::filesystem::exists(std::filesystem::path(scratch.path("report")) / file));
  }
}

TEST_CASE("topofit bench refuses bad input with a clear error", "[bench]") {
  std::ostringstream out, err;
  BenchOptions policy = Small();
  policy.policies = "baseline,magic";
  CHECK(RunBench(policy, out, err) == 1);
  CHECK(err.str().find("unknown policy \"magic\"") != std::string::npos);

  BenchOptions chain = Small();
  chain.expander_chain = "least-waste,priority";
  CHECK(RunBench(chain, out, err) == 1);
  CHECK(err.str().find("unknown expander \"priority\"") != std::string::npos);

  BenchOptions traces = Small();
  traces.workload = "openb";
  traces.traces = "/nonexistent/traces";
  CHECK(RunBench(traces, out, err) == 1);
  CHECK(err.str().find("/nonexistent/traces") != std::string::npos);
  CHECK(out.str().empty());
}

}  // namespace
}  // namespace topofit::cli
