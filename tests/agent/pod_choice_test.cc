#include "agent/pod_choice.h"

#include <catch2/catch.hpp>

#include "tests/agent/test_node.h"
#include "tests/kube/status_matchers.h"
#include "topology/allocator.h"

namespace topofit::agent {
namespace {

using testing::G5Snapshot;
using testing::Uuids;
using topology::GpuSet;

GpuSet Ids(const std::string& text) { return GpuSet::Parse(text, 8).value(); }

ChosenPod Pod(const std::string& name, const std::string& ids, int bound_second) {
  ChosenPod pod;
  pod.key = "ml/" + name;
  pod.uid = "uid-" + name;
  pod.bound_at = absl::FromUnixSeconds(1'700'000'000 + bound_second);
  pod.chosen = Ids(ids);
  return pod;
}

const std::vector<std::string> kAll = Uuids({0, 1, 2, 3, 4, 5, 6, 7});

TEST_CASE("PreferDevices gives the first-bound pod whose choice fits", "[agent][choice]") {
  const DeviceSnapshot devices = G5Snapshot();
  std::vector<ChosenPod> pods = {Pod("train", "0,1,2,3", 2), Pod("infer", "4,5", 1)};
  SortInBindOrder(pods);
  REQUIRE(pods[0].key == "ml/infer");

  SECTION("a 2-GPU request: infer (bound first) gets 4,5") {
    absl::StatusOr<PreferredDevices> got = PreferDevices(devices, pods, {kAll, {}, 2});
    REQUIRE_OK(got);
    REQUIRE(got->pod != nullptr);
    CHECK(got->pod->key == "ml/infer");
    CHECK(got->device_ids == Uuids({4, 5}));
  }
  SECTION("a 4-GPU request: the count picks train") {
    absl::StatusOr<PreferredDevices> got = PreferDevices(devices, pods, {kAll, {}, 4});
    REQUIRE_OK(got);
    REQUIRE(got->pod != nullptr);
    CHECK(got->pod->key == "ml/train");
    CHECK(got->device_ids == Uuids({0, 1, 2, 3}));
  }
  SECTION("a choice not all available is skipped: the later pod with one that is") {
    pods.insert(pods.begin(), Pod("early", "6,7", 0));
    absl::StatusOr<PreferredDevices> got = PreferDevices(devices, pods, {Uuids({0, 1, 2, 3, 4, 5, 6}), {}, 2});
    REQUIRE_OK(got);
    REQUIRE(got->pod != nullptr);
    CHECK(got->pod->key == "ml/infer");
  }
  SECTION("a choice that leaves out a must-include device is skipped") {
    absl::StatusOr<PreferredDevices> got = PreferDevices(devices, pods, {kAll, Uuids({6}), 2});
    REQUIRE_OK(got);
    CHECK(got->pod == nullptr);
    CHECK(got->device_ids == Uuids({6, 7}));  // 6 required; 7 is its one PHB partner
  }
}

TEST_CASE("PreferDevices without a matching pod: the allocator's best set, never an arbitrary one", "[agent][choice]") {
  const DeviceSnapshot devices = G5Snapshot();
  // Of 0,2,4,5,6 the one PHB pair is 4,5 (every other pair crosses a host bridge or the SMP link).
  absl::StatusOr<PreferredDevices> pair = PreferDevices(devices, {}, {Uuids({0, 2, 4, 5, 6}), {}, 2});
  REQUIRE_OK(pair);
  CHECK(pair->pod == nullptr);
  CHECK(pair->device_ids == Uuids({4, 5}));

  // Of everything, four GPUs: one NUMA node's block (PHB/NODE), never across the SMP link.
  absl::StatusOr<PreferredDevices> four = PreferDevices(devices, {}, {kAll, {}, 4});
  REQUIRE_OK(four);
  const GpuSet chosen = *GpusOf(devices, four->device_ids, "test");
  CHECK((chosen == Ids("0,1,2,3") || chosen == Ids("4,5,6,7")));
  CHECK(chosen == topology::Allocate(*devices.topology, devices.Healthy(), {4}).value().gpus);
}

TEST_CASE("PreferDevices refuses requests it cannot answer truthfully", "[agent][choice]") {
  const DeviceSnapshot devices = G5Snapshot();
  struct Case {
    const char* name;
    ContainerRequest request;
    const char* message;
  };
  const Case cases[] = {
      {"a device this node does not have", {{Uuids({0})[0], "GPU-someone-else"}, {}, 1}, "GPU-someone-else is not a GPU of this node"},
      {"a device listed twice", {Uuids({0, 1, 1}), {}, 2}, "listed twice"},
      {"size 0", {kAll, {}, 0}, "allocation_size 0: must be positive"},
      {"a negative size", {kAll, {}, -2}, "must be positive"},
      {"more than available", {Uuids({0, 1}), {}, 3}, "allocation_size 3: only 2 healthy devices are available"},
      {"must-include not available", {Uuids({0, 1}), Uuids({2}), 1}, "not available"},
      {"more must-include than the size", {Uuids({0, 1}), Uuids({0, 1}), 1}, "2 must-include devices for allocation_size 1"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) { CHECK_STATUS(PreferDevices(devices, {}, c.request), absl::StatusCode::kInvalidArgument, c.message); }
  }
  SECTION("an unhealthy device is not usable") {
    DeviceSnapshot sick = devices;
    sick.devices[1].healthy = false;
    CHECK_STATUS(PreferDevices(sick, {}, {Uuids({0, 1}), {}, 2}), absl::StatusCode::kInvalidArgument,
                 "only 1 healthy devices");
  }
}

TEST_CASE("PodForAllocation: the exact choice first, else the first with that count", "[agent][choice]") {
  std::vector<ChosenPod> pods = {Pod("a", "0,1", 0), Pod("b", "2,3", 1), Pod("c", "4,5,6,7", 2)};
  CHECK(PodForAllocation(pods, Ids("2,3"))->key == "ml/b");
  CHECK(PodForAllocation(pods, Ids("6,7"))->key == "ml/a");  // the kubelet chose otherwise for the first
  CHECK(PodForAllocation(pods, Ids("0,1,2,3"))->key == "ml/c");
  CHECK(PodForAllocation(pods, Ids("0,1,2")) == nullptr);
}

TEST_CASE("SortInBindOrder: bind time, then creation, then uid, an unstamped pod last", "[agent][choice]") {
  ChosenPod unstamped = Pod("old", "0", 0);
  unstamped.bound_at = absl::InfiniteFuture();
  std::vector<ChosenPod> pods = {unstamped, Pod("second", "1", 5), Pod("first", "2", 3)};
  SortInBindOrder(pods);
  CHECK(pods[0].key == "ml/first");
  CHECK(pods[1].key == "ml/second");
  CHECK(pods[2].key == "ml/old");
}

}  // namespace
}  // namespace topofit::agent
