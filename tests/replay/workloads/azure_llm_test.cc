#include "replay/workloads/azure_llm.h"

#include <catch2/catch.hpp>
#include <map>

#include "tests/kube/status_matchers.h"
#include "tests/replay/workloads/workload_testing.h"

namespace topofit::sim {
namespace {

using testing::ScratchDir;

// One deployment with round numbers: 100 context or 10 generated tokens per replica-second.
AzureLlmOptions OneModel(const std::string& trace_dir) {
  AzureLlmOptions options;
  options.trace_dir = trace_dir;
  options.services = {"test"};
  options.models = {LlmModelClass{"m", 2, 1.0, 100, 10, 0.2}};
  options.load_scale = 1;
  options.scale_down_stabilization = 2 * kMinute;
  return options;
}

TEST_CASE("azure llm: replicas follow each window's load, scale down after the stabilisation window",
          "[azure_llm]") {
  ScratchDir dir("azure-llm-rule");
  // Windows are minutes from the first request. Demand = (context/100 + generated/10) / 60:
  //   w0: (6000/100 + 600/10) / 60 = 2       -> target 2
  //   w1: (18000/100) / 60 = 3               -> target 3
  //   w2: no requests                        -> target 1 (min_replicas); replicas max(3, 1) = 3
  //   w3: (60/100) / 60 = 0.01               -> target 1; replicas max(1, 1) = 1
  dir.Write("AzureLLMInferenceTrace_test.csv",
            "TIMESTAMP,ContextTokens,GeneratedTokens\n"
            "2023-11-16 18:00:00.0000000,4000,100\n"
            "2023-11-16 18:00:59.9000000,2000,500\n"
            "2023-11-16 18:01:10.1234567,18000,0\n"
            "2023-11-16 18:03:30.0000000,60,0\n");
  const absl::StatusOr<Workload> workload = LoadAzureLlm(OneModel(dir.path()));
  REQUIRE_OK(workload);
  REQUIRE(workload->pods.size() == 3);
  // Replicas 0 and 1 start at 0, replica 2 at 1 min; at 3 min the newest two end; the last ends with the
  // trace, at the end of window 3.
  struct Expected {
    const char* name;
    SimTime arrival;
    SimTime duration;
  };
  const Expected expected[] = {
      {"test-m-0", 0, 4 * kMinute},
      {"test-m-1", 0, 3 * kMinute},
      {"test-m-2", 1 * kMinute, 2 * kMinute},
  };
  for (size_t i = 0; i < 3; ++i) {
    const PodSpec& pod = workload->pods[i];
    INFO(expected[i].name);
    CHECK(pod.name == expected[i].name);
    CHECK(pod.arrival == expected[i].arrival);
    CHECK(pod.duration == expected[i].duration);
    CHECK(pod.gpus == 2);
    CHECK(pod.cpu_milli == 16000);
    CHECK(pod.min_link == "NV");
    CHECK(pod.topology_policy == "required");
    CHECK(pod.comm_fraction == 0.2);
    CHECK(pod.kind == "inference");
  }
  CHECK_THAT(workload->description, Catch::Contains("4 requests"));
}

TEST_CASE("azure llm: a bad timestamp is an error naming the file and the line", "[azure_llm]") {
  ScratchDir dir("azure-llm-bad");
  dir.Write("AzureLLMInferenceTrace_test.csv",
            "TIMESTAMP,ContextTokens,GeneratedTokens\n"
            "2023-11-16 18:00:00.0000000,10,1\n"
            "yesterday,10,1\n");
  CHECK_STATUS(LoadAzureLlm(OneModel(dir.path())), absl::StatusCode::kInvalidArgument,
               "AzureLLMInferenceTrace_test.csv:3: TIMESTAMP");
  AzureLlmOptions no_service = OneModel(dir.path());
  no_service.services = {"absent"};
  CHECK_STATUS(LoadAzureLlm(no_service), absl::StatusCode::kNotFound, "AzureLLMInferenceTrace_absent.csv");
}

TEST_CASE("azure llm trace, read in place: both services, every replica size, NVLink for multi-GPU",
          "[azure_llm][trace]") {
  AzureLlmOptions options;
  options.trace_dir = (testing::SharedDir() / "traces" / "azure-llm-inference-2023").string();
  if (!std::filesystem::exists(options.trace_dir)) {
    WARN("skipped: no Azure LLM trace at " << options.trace_dir << " (set TOPOFIT_SHARED_DIR)");
    return;
  }
  const absl::StatusOr<Workload> workload = LoadAzureLlm(options);
  REQUIRE_OK(workload);
  CHECK_THAT(workload->description, Catch::Contains("28185 requests"));
  std::map<int, int> pods_by_gpus;
  for (const PodSpec& pod : workload->pods) {
    ++pods_by_gpus[pod.gpus];
    CHECK(pod.duration > 0);
    CHECK(pod.arrival + pod.duration <= 60 * kMinute);  // the trace spans 58.5 minutes
    if (pod.gpus >= 2) CHECK(pod.topology_policy == "required");
  }
  CHECK(pods_by_gpus.size() == 4);
  CHECK(testing::SortedByArrivalThenName(workload->pods));
}

}  // namespace
}  // namespace topofit::sim
