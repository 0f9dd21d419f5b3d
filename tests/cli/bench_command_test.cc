#include "cli/bench_command.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "absl/strings/str_split.h"
#include "absl/strings/ascii.h"

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
  for (const char* row : {"stock", "tuned", "extender-only", "expander-only", "topofit", "GPU-hours provisioned",
                          "stranded scale-ups", "stranded nodes", "pending p95, all pods", "vs tuned", "vs stock",
                          "measuring window: [0, T)", "legend"}) {
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
  options.baselines = "stock";
  options.policies = "topofit";
  options.out = scratch.path("report");
  std::ostringstream out, err;
  REQUIRE(RunBench(options, out, err) == 0);
  for (const char* file : {"summary.csv", "summary.json", "timeline.csv", "pending_cdf.csv"}) {
    CHECK(std::filesystem::exists(std::filesystem::path(scratch.path("report")) / file));
  }
}

// The figure a table row shows for the first policy, e.g. "28" from "nodes that never came up   28".
std::string FirstFigure(const std::string& table, const std::string& row) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(row, 0) != 0) continue;
    std::istringstream rest(line.substr(row.size()));
    std::string figure;
    rest >> figure;
    return figure;
  }
  return "no row " + row;
}

TEST_CASE("topofit bench --provision-failure-rate: nodes that never come up are counted", "[bench]") {
  BenchOptions options = Small();
  options.baselines = "stock";
  options.policies = "";
  std::ostringstream healthy, failing, err;
  REQUIRE(RunBench(options, healthy, err) == 0);
  CHECK(FirstFigure(healthy.str(), "nodes that never came up") == "0");
  options.provision_failure_rate = 0.5;
  REQUIRE(RunBench(options, failing, err) == 0);
  const std::string failed = FirstFigure(failing.str(), "nodes that never came up");
  CHECK(failed != "0");
  CHECK(failed.find_first_not_of("0123456789,") == std::string::npos);
}

TEST_CASE("topofit bench refuses bad input with a clear error", "[bench]") {
  std::ostringstream out, err;
  BenchOptions policy = Small();
  policy.policies = "topofit,magic";
  CHECK(RunBench(policy, out, err) == 1);
  CHECK(err.str().find("unknown policy \"magic\"") != std::string::npos);

  BenchOptions baseline = Small();
  baseline.baselines = "stock,magic";
  CHECK(RunBench(baseline, out, err) == 1);
  CHECK(err.str().find("unknown baseline \"magic\"") != std::string::npos);

  BenchOptions trace = Small();
  trace.workload = "openb";
  trace.traces = "/nonexistent/traces";
  CHECK(RunBench(trace, out, err) == 1);
  CHECK(err.str().find("no Alibaba GPU 2023 trace in /nonexistent/traces/alibaba-gpu-v2023: download it as "
                       "README.md (\"Traces\") says") != std::string::npos);

  BenchOptions seeds = Small();
  seeds.seeds = "5-1";
  CHECK(RunBench(seeds, out, err) == 1);
  CHECK(err.str().find("--seeds") != std::string::npos);

  BenchOptions chain = Small();
  chain.expander_chain = "least-waste,magic";
  CHECK(RunBench(chain, out, err) == 1);
  CHECK(err.str().find("unknown expander \"magic\"") != std::string::npos);

  BenchOptions traces = Small();
  traces.workload = "openb";
  traces.traces = "/nonexistent/traces";
  CHECK(RunBench(traces, out, err) == 1);
  CHECK(err.str().find("/nonexistent/traces") != std::string::npos);
  CHECK(out.str().empty());
}

// Under DRA the allocator picks every pod's GPUs (first fit; the device plugin picks a random GPU for one):
// the worlds replay differently. Which sets topofit's filter chose and the allocator did not is counted in
// the model's own test (tests/replay/kube_scheduler_model_test.cc). --gpu-ids (who picks for a
// device-plugin pod) is not read under DRA.
TEST_CASE("topofit bench --gpu-api dra replays the worlds with the DRA allocator", "[bench][dra]") {
  BenchOptions options = Small();
  options.baselines = "stock";
  options.policies = "topofit";
  std::ostringstream plugin, dra, err;
  REQUIRE(RunBench(options, plugin, err) == 0);
  options.gpu_api = "dra";
  REQUIRE(RunBench(options, dra, err) == 0);
  CHECK(plugin.str() != dra.str());
  CHECK_THAT(dra.str(), Catch::Contains("GPU sets not as chosen"));

  options.gpu_ids = "device-plugin";
  std::ostringstream out;
  CHECK(RunBench(options, out, err) == 1);
  CHECK(err.str().find("--gpu-ids is not read with --gpu-api dra") != std::string::npos);
}

TEST_CASE("topofit bench --expander-priorities feeds the priority expander", "[bench]") {
  testing::ScratchDir scratch("topofit-bench-priorities-test");
  scratch.Write("priorities.yaml", "10:\n  - .*\n50:\n  - h100\n");
  BenchOptions options = Small();
  options.baselines = "stock";
  options.policies = "topofit";
  options.expander_chain = "priority,least-waste";
  options.expander_priorities = scratch.path("priorities.yaml");
  std::ostringstream out, err;
  REQUIRE(RunBench(options, out, err) == 0);
  CHECK(err.str().find("CA expanders priority,least-waste") != std::string::npos);
  CHECK(out.str().find("GPU-hours provisioned") != std::string::npos);
}

TEST_CASE("topofit bench --expander-priorities: missing, unreadable or malformed is a clear error", "[bench]") {
  testing::ScratchDir scratch("topofit-bench-priorities-bad-test");
  scratch.Write("bad-regex.yaml", "10:\n  - \"p4d[\"\n");
  scratch.Write("bad-yaml.yaml", "10: [g5\n");
  BenchOptions options = Small();
  options.expander_chain = "priority";

  std::ostringstream out, err;
  for (const char* name : {"missing.yaml", "bad-regex.yaml", "bad-yaml.yaml"}) {
    CAPTURE(name);
    options.expander_priorities = scratch.path(name);
    std::ostringstream file_out, file_err;
    CHECK(RunBench(options, file_out, file_err) == 1);
    CHECK(file_err.str().find(scratch.path(name)) != std::string::npos);
    CHECK(file_out.str().empty());
  }
  std::ostringstream regex_err;
  options.expander_priorities = scratch.path("bad-regex.yaml");
  CHECK(RunBench(options, out, regex_err) == 1);
  CHECK(regex_err.str().find("bad regex \"p4d[\"") != std::string::npos);

  BenchOptions unused = Small();  // a file the chain would never read
  unused.expander_priorities = scratch.path("bad-yaml.yaml");
  std::ostringstream unused_err;
  CHECK(RunBench(unused, out, unused_err) == 1);
  CHECK(unused_err.str().find("only read when an expander chain names priority") != std::string::npos);
}

TEST_CASE("topofit bench without --expander-priorities prefers the NVLink groups, and says so", "[bench]") {
  BenchOptions options = Small();
  options.baselines = "sweep";
  options.policies = "";
  std::ostringstream out, err;
  REQUIRE(RunBench(options, out, err) == 0);
  // The cloud fleet's NVSwitch groups, from the catalog: p5 (H100) and p4d (A100).
  CHECK(err.str().find("20:\n  - '^p5\\.48xlarge$'\n  - '^p4d\\.24xlarge$'\n") != std::string::npos);
  for (const char* column : {"tuned:random", "tuned", "tuned:price", "tuned:priority,least-waste"}) {
    CHECK(out.str().find(column) != std::string::npos);
  }
}

TEST_CASE("topofit bench --seeds: mean ± sd per cell, one seed is exactly --seed", "[bench]") {
  BenchOptions options = Small();
  options.baselines = "tuned";
  options.policies = "topofit";
  options.seeds = "3";
  std::ostringstream listed, err;
  REQUIRE(RunBench(options, listed, err) == 0);
  options.seeds.clear();
  options.seed = 3;
  std::ostringstream single;
  REQUIRE(RunBench(options, single, err) == 0);
  CHECK(listed.str() == single.str());

  options.seeds = "1-2";
  std::ostringstream two, again;
  REQUIRE(RunBench(options, two, err) == 0);
  CHECK(two.str().find("seeds: 1, 2; each cell is the mean ± the sample standard deviation") != std::string::npos);
  CHECK(two.str().find(" ± ") != std::string::npos);
  REQUIRE(RunBench(options, again, err) == 0);
  CHECK(two.str() == again.str());
}

TEST_CASE("topofit bench --comm-fraction weighs the slowdown model", "[bench]") {
  BenchOptions options = Small();
  options.baselines = "stock";
  options.policies = "";
  options.comm_fraction = 0;
  std::ostringstream none, err;
  REQUIRE(RunBench(options, none, err) == 0);
  CHECK(FirstFigure(none.str(), "slowdown GPU-hours") == "0.00");
  CHECK(FirstFigure(none.str(), "mean stretch, multi-GPU pods") == "1.000x");
  options.comm_fraction = 0.5;
  std::ostringstream half;
  REQUIRE(RunBench(options, half, err) == 0);
  CHECK(FirstFigure(half.str(), "slowdown GPU-hours") != "0.00");
}

// A row's cells after its label, one per policy (cells are two or more spaces apart).
std::vector<std::string> Cells(const std::string& table, const std::string& row) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(row + "  ", 0) != 0) continue;
    std::vector<std::string> cells = absl::StrSplit(line.substr(row.size()), absl::ByString("  "), absl::SkipWhitespace());
    for (std::string& cell : cells) cell = std::string(absl::StripAsciiWhitespace(cell));
    return cells;
  }
  return {};
}

TEST_CASE("topofit bench --runtimes-declared: pods that say their run time ask for the topology they prefer",
          "[bench]") {
  BenchOptions options = Small();
  options.baselines = "tuned";
  options.policies = "topofit";
  std::ostringstream silent, declared, err;
  REQUIRE(RunBench(options, silent, err) == 0);
  options.runtimes_declared = true;
  REQUIRE(RunBench(options, declared, err) == 0);
  const std::vector<std::string> before = Cells(silent.str(), "slowdown GPU-hours");
  const std::vector<std::string> after = Cells(declared.str(), "slowdown GPU-hours");
  REQUIRE(before.size() == 2);
  REQUIRE(after.size() == 2);
  CHECK(after[0] == before[0]);  // tuned reads no annotation of topofit's
  // topofit's long trainers wait for NVLink rather than run slower: less slowdown.
  CHECK(std::stod(after[1]) < std::stod(before[1]));
}

TEST_CASE("topofit bench --lead-in: the first arrivals come early and are not counted, the window says so",
          "[bench][lead_in]") {
  BenchOptions options = Small();
  options.baselines = "tuned";
  options.policies = "topofit";
  options.lead_in_minutes = 30;
  std::ostringstream out, err;
  REQUIRE(RunBench(options, out, err) == 0);
  INFO(out.str());
  CHECK_THAT(out.str(), Catch::Contains("lead-in: measuring begins at"));
  CHECK_THAT(out.str(), Catch::Contains("measuring window: [0."));
  const std::vector<std::string> pods = Cells(out.str(), "pods");
  REQUIRE(pods.size() == 2);
  CHECK(std::stoi(pods[0]) < 400);  // the first arrival time's pods ran before measuring began
  CHECK(std::stoi(pods[0]) > 350);
}

// How the bursts follow the day is the generator's test (tests/replay/workloads/synthetic_test.cc).
TEST_CASE("topofit bench --diurnal reaches the synthetic workload: the same pods, other arrivals", "[bench]") {
  BenchOptions options = Small();
  options.baselines = "tuned";
  options.policies = "topofit";
  std::ostringstream uniform_out, uniform_err;
  REQUIRE(RunBench(options, uniform_out, uniform_err) == 0);
  options.diurnal = 0.8;
  std::ostringstream out, err;
  REQUIRE(RunBench(options, out, err) == 0);
  CHECK(Cells(out.str(), "pods") == Cells(uniform_out.str(), "pods"));
  CHECK(out.str() != uniform_out.str());
}

TEST_CASE("topofit bench --workload gangs and --workload jobs on --fleet show the gang rows", "[bench]") {
  std::ostringstream out, err;
  BenchOptions gangs;
  gangs.workload = "gangs";
  gangs.racks = 2;
  gangs.baselines = "stock";
  gangs.policies = "topofit";
  gangs.progress = false;
  REQUIRE(RunBench(gangs, out, err) == 0);
  for (const char* row : {"gangs:nvl72", "split gangs", "gang start p95", "partial gang GPU-hours"}) {
    CHECK(out.str().find(row) != std::string::npos);
  }

  testing::ScratchDir scratch("topofit-bench-jobs");
  std::ofstream(scratch.path("fleet.yaml")) << "- {name: rack, instance_type: gb200-nvl72-node, gpus: 4, cpu: '142', "
                                               "memory: 880Gi, price_per_hour: 42, max_size: 4, nodes_per_domain: 4}\n";
  std::ofstream(scratch.path("jobs.csv")) << "submit_seconds,pods,gpus_per_pod,cpu,memory,duration_seconds,gang,topology,level\n"
                                             "0,3,4,64,512Gi,3600,true,required,domain\n";
  BenchOptions jobs = gangs;
  jobs.workload = "jobs";
  jobs.jobs_file = scratch.path("jobs.csv");
  jobs.fleet = scratch.path("fleet.yaml");
  std::ostringstream jobs_out;
  REQUIRE(RunBench(jobs, jobs_out, err) == 0);
  CHECK(jobs_out.str().find("(3 pods, 1 node groups)") != std::string::npos);
  CHECK(jobs_out.str().find("gangs started") != std::string::npos);

  // Without --jobs-file, or with a fleet that is not one: a clear error, exit 1.
  jobs.jobs_file.clear();
  std::ostringstream ignored, no_jobs;
  CHECK(RunBench(jobs, ignored, no_jobs) == 1);
  CHECK(no_jobs.str().find("--jobs-file") != std::string::npos);
  jobs.jobs_file = scratch.path("jobs.csv");
  std::ofstream(scratch.path("fleet.yaml")) << "- {name: rack}\n";
  std::ostringstream bad_fleet;
  CHECK(RunBench(jobs, ignored, bad_fleet) == 1);
  CHECK(bad_fleet.str().find("no max_size") != std::string::npos);
}

}  // namespace
}  // namespace topofit::cli
