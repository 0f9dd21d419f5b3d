#include <algorithm>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "replay/policy.h"
#include "replay/simulator.h"
#include "tests/replay/run_policy.h"
#include "tests/replay/scenario.h"

namespace topofit::sim {
namespace {

using testing::Group;
using testing::Named;
using testing::Pod;

PodSpec Inference(std::string name, SimTime arrival, SimTime duration, int gpus) {
  PodSpec pod = Pod(std::move(name), arrival, duration, gpus);
  pod.kind = "inference";
  return pod;
}

ReplayResult RunWith(const Workload& workload, const std::string& policy, const std::string& headroom) {
  Policy chosen = Named(policy);
  absl::StatusOr<Headroom> parsed = ParseHeadroom(headroom);
  REQUIRE(parsed.ok());
  chosen.headroom = *parsed;
  absl::StatusOr<ReplayResult> result = Replay(workload, chosen, ReplayOptions{});
  REQUIRE(result.ok());
  return *std::move(result);
}

TEST_CASE("Headroom is none, buffer:N or buffer:adaptive, and names the policy it is added to", "[replay][headroom]") {
  CHECK(ParseHeadroom("none")->sizing == Headroom::Sizing::kNone);
  CHECK(ParseHeadroom("buffer:3")->replicas == 3);
  CHECK(ParseHeadroom("buffer:adaptive")->sizing == Headroom::Sizing::kAdaptive);
  CHECK(ParseHeadroom("buffer:adaptive:0.6")->adaptive.quantile == 0.6);
  CHECK(ParseHeadroom("buffer:adaptive:0.6")->Name() == "buffer:adaptive:0.6");
  for (const char* bad : {"buffer:0", "buffer:-1", "buffer:", "buffer:x", "buffers:2", "", "buffer:adaptive:0",
                          "buffer:adaptive:1.5", "buffer:adaptive:"}) {
    INFO(bad);
    CHECK(ParseHeadroom(bad).status().code() == absl::StatusCode::kInvalidArgument);
  }
  const absl::StatusOr<std::vector<Policy>> policies =
      SelectPolicies({.baselines = "tuned", .policies = "topofit", .headroom = "none,buffer:2"});
  REQUIRE(policies.ok());
  std::vector<std::string> names;
  for (const Policy& policy : *policies) names.push_back(policy.name);
  CHECK(names == std::vector<std::string>{"tuned", "tuned+buffer:2", "topofit", "topofit+buffer:2"});
  CHECK_FALSE(SelectPolicies({.baselines = "tuned", .policies = "", .headroom = "buffer:big"}).ok());
}

// One 2-GPU inference pod half an hour in, on a fleet that starts empty.
Workload LatePod() {
  Workload workload;
  workload.groups = {Group("a100", "p4d.24xlarge", 8, 32.77, 4)};
  workload.pods = {Inference("late", 30 * kMinute, 10 * kMinute, 2)};
  return workload;
}

TEST_CASE("A static buffer grows a node before any pod comes, keeps it from scale-down, and the pod starts at once",
          "[replay][headroom]") {
  for (const std::string policy : {"tuned", "topofit"}) {
    INFO(policy);
    const ReplayResult cold = RunWith(LatePod(), policy, "none");
    REQUIRE(cold.pods.size() == 1);
    CHECK(cold.pods[0].first_start >= 30 * kMinute + 5 * kMinute);  // a node's boot after it came

    const ReplayResult warm = RunWith(LatePod(), policy, "buffer:1");
    CHECK(warm.pods.size() == 1);  // the buffer's fake pod is no pod of the workload
    CHECK(warm.pods[0].first_start == 30 * kMinute);
    REQUIRE(warm.scale_ups.size() == 1);  // at the first loop, for the fake pod; the real one fitted beside it
    CHECK(warm.scale_ups[0].at == 10 * kSecond);
    REQUIRE(warm.nodes.size() == 1);
    CHECK(warm.nodes[0].removed < 0);  // 20 minutes empty before the pod came: held by the buffer
  }
}

TEST_CASE("Capacity a buffer holds is what the next pod takes: the buffer then grows again", "[replay][headroom]") {
  Workload workload;
  // Nodes of 8 GPUs and a buffer of one 8-GPU pod: each real 8-GPU pod takes the buffered node whole.
  workload.groups = {Group("a100", "p4d.24xlarge", 8, 32.77, 4)};
  workload.pods = {Inference("first", 30 * kMinute, kHour, 8), Inference("second", 60 * kMinute, kHour, 8)};
  const ReplayResult result = RunWith(workload, "tuned", "buffer:1");
  CHECK(result.pods[0].first_start == 30 * kMinute);
  CHECK(result.pods[1].first_start == 60 * kMinute);  // the node grown when the first took the buffered one
  CHECK(result.scale_ups.size() == 3);
  CHECK(result.nodes_created == 3);
}

TEST_CASE("An adaptive buffer learns a repeating burst: after the first, bursts no longer wait for a boot",
          "[replay][headroom]") {
  Workload workload;
  workload.groups = {Group("a100", "p4d.24xlarge", 8, 32.77, 8)};
  // Every 20 minutes for 4 hours, three 2-GPU replicas for 3 minutes: between bursts their node is removed
  // (10 minutes unneeded), so without headroom every burst waits for a new one.
  for (int burst = 0; burst < 12; ++burst) {
    for (int i = 0; i < 3; ++i) {
      workload.pods.push_back(
          Inference(absl::StrCat("b", burst, "-", i), burst * 20 * kMinute + i * kSecond, 3 * kMinute, 2));
    }
  }
  auto waits_after_first_hour = [](const ReplayResult& result) {
    SimTime worst = 0;
    for (const PodOutcome& pod : result.pods) {
      if (pod.arrival >= kHour) worst = std::max(worst, pod.first_start - pod.arrival);
    }
    return worst;
  };
  const ReplayResult none = RunWith(workload, "topofit", "none");
  CHECK(waits_after_first_hour(none) >= 5 * kMinute);
  const ReplayResult adaptive = RunWith(workload, "topofit", "buffer:adaptive");
  CHECK(adaptive.pods[0].first_start - adaptive.pods[0].arrival >= 5 * kMinute);  // nothing learnt yet
  CHECK(waits_after_first_hour(adaptive) == 0);
}

// Issue 34: topofit's score keeps the sets the buffers are for whole (decision/warm_capacity.h). Two cube-mesh
// nodes (NVLink quads 0-3 and 4-7) each have one whole quad free — one has nothing else, the other one more
// GPU — and the buffer keeps two 4-GPU NVLink replicas warm. A 1-GPU pod that takes a GPU of a whole quad
// leaves cluster-autoscaler counting room for one replica only, so it grows a node for the other at once;
// kept whole, both replicas fit until the pod they are for comes.
TEST_CASE("topofit keeps the buffered NVLink sets whole, and grows no node for the buffer before its pod comes",
          "[replay][headroom]") {
  Workload workload;
  workload.groups = {Group("x", "p3.16xlarge", 8, 24.48, 2, 1), Group("y", "p3dn.24xlarge", 8, 31.22, 2, 1)};
  PodSpec quad = Pod("quad", kMinute, 10 * kHour, 4);
  quad.gpu_products = {"Tesla-V100-SXM2-16GB"};  // the p3.16xlarge: one quad left free
  PodSpec three = Pod("three", kMinute + kSecond, 10 * kHour, 3);
  three.gpu_products = {"Tesla-V100-SXM2-32GB"};  // the p3dn: a quad and one GPU left free
  PodSpec llm = Inference("llm", 10 * kHour, kHour, 4);  // the shape the buffer is for
  llm.min_link = "NV";
  llm.topology_policy = "required";
  workload.pods = {quad, three, Pod("one", 3 * kMinute, 10 * kHour, 1), llm};

  const ReplayResult kept = RunWith(workload, "topofit", "buffer:2");
  const ReplayResult broken = RunWith(workload, "topofit-no-keep", "buffer:2");
  // Kept whole, the buffer is short only once the pod it was for takes a replica: CA grows a node then, to
  // keep the next one warm. Broken by the 1-GPU pod, CA grows one at once and keeps it for ten hours.
  REQUIRE(kept.scale_ups.size() == 1);
  CHECK(kept.scale_ups[0].at == 10 * kHour);
  REQUIRE(broken.scale_ups.size() == 1);
  CHECK(broken.scale_ups[0].at == 3 * kMinute);
  for (const ReplayResult* result : {&kept, &broken}) {
    REQUIRE(result->pods.size() == 4);
    CHECK(result->pods[3].first_start == 10 * kHour);  // warm either way
  }
}

}  // namespace
}  // namespace topofit::sim
