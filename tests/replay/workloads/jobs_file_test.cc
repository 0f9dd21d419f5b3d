#include "replay/workloads/jobs_file.h"

#include <catch2/catch.hpp>

#include "tests/replay/workloads/workload_testing.h"

namespace topofit::sim {
namespace {

using testing::ScratchDir;

TEST_CASE("Jobs file: gangs, lone pods that ask for NVLink, and pods that ask for nothing", "[jobs]") {
  ScratchDir dir("jobs-file");
  dir.Write("jobs.csv",
            "submit_seconds,pods,gpus_per_pod,cpu,memory,duration_seconds,gang,topology,level,name,replica\n"
            "60,2,8,32,256Gi,3600.5,false,preferred,node,eval,\n"
            "0,3,4,64,512Gi,7200,true,required,domain,pretrain,\n"
            "30,1,1,500m,2Gi,1800,false,none,,,true\n");
  const absl::StatusOr<Workload> workload = LoadJobsCsv(dir.path() + "/jobs.csv", {});
  REQUIRE(workload.ok());
  REQUIRE(workload->pods.size() == 6);
  // By arrival: the gang's members first.
  for (int i = 0; i < 3; ++i) {
    const PodSpec& member = workload->pods[i];
    CHECK(member.name == "pretrain-" + std::to_string(i));
    CHECK(member.gang == "pretrain");
    CHECK(member.gang_size == 3);
    CHECK(member.gang_topology == "domain");
    CHECK(member.gang_topology_required);
    CHECK_FALSE(member.safe_to_evict);
    CHECK(member.gpus == 4);
    CHECK(member.cpu_milli == 64'000);
    CHECK(member.memory_mib == 512 * 1024);
    CHECK(member.duration == 2 * kHour);
    CHECK(member.comm_fraction == 0.2);
  }
  const PodSpec& lone = workload->pods[3];
  CHECK(lone.name == "job-3");
  CHECK(lone.arrival == 30 * kSecond);
  CHECK(lone.cpu_milli == 500);
  CHECK(lone.gang.empty());
  CHECK(lone.min_link.empty());
  CHECK(lone.comm_fraction == 0);
  CHECK(lone.runs_until_deleted);
  const PodSpec& eval = workload->pods[4];
  CHECK(eval.name == "eval-0");
  CHECK(eval.min_link == "NV");
  CHECK(eval.topology_policy == "preferred");
  CHECK(eval.duration == 3'600'500);
  CHECK(eval.safe_to_evict);
}

TEST_CASE("Jobs file: a malformed row is refused with its file and line", "[jobs]") {
  ScratchDir dir("jobs-file-bad");
  const std::string header = "submit_seconds,pods,gpus_per_pod,cpu,memory,duration_seconds,gang,topology,level\n";
  const auto error = [&](const std::string& row) {
    dir.Write("jobs.csv", header + row + "\n");
    absl::StatusOr<Workload> workload = LoadJobsCsv(dir.path() + "/jobs.csv", {});
    REQUIRE_FALSE(workload.ok());
    return std::string(workload.status().message());
  };
  CHECK_THAT(error("0,1,4,8,8Gi,60,false,required,domain"), Catch::Contains("jobs.csv:2: a job that is not a gang"));
  CHECK_THAT(error("0,1,4,8,8Gi,60,maybe,none,"), Catch::Contains("\"maybe\" is not true or false"));
  CHECK_THAT(error("0,1,4,8,8Gi,60,true,always,node"), Catch::Contains("topology \"always\""));
  CHECK_THAT(error("0,1,4,8,8Gi,60,true,required,rack"), Catch::Contains("level \"rack\""));
  CHECK_THAT(error("0,0,4,8,8Gi,60,false,none,"), Catch::Contains("pods must be"));
  CHECK_THAT(error("-5,1,4,8,8Gi,60,false,none,"), Catch::Contains("not a number of seconds"));
  CHECK_THAT(error("0,1,4,eight,8Gi,60,false,none,"), Catch::Contains("not a quantity"));
  dir.Write("jobs.csv", "submit_seconds,pods\n0,1\n");
  CHECK_FALSE(LoadJobsCsv(dir.path() + "/jobs.csv", {}).ok());
}

}  // namespace
}  // namespace topofit::sim
