#include "agent/gpu_ids_correction.h"

#include <catch2/catch.hpp>

#include <map>

#include "kube/topofit_annotations.h"
#include "tests/agent/kubelet_fixtures.h"
#include "tests/agent/test_node.h"

namespace topofit::agent {
namespace {

using testing::FixtureUuids;
using testing::HaveKubeletFixtures;
using testing::ReadFixture;

// The fixture node: its 8 UUIDs on the g5 matrix (only the count matters here).
DeviceSnapshot FixtureNode() {
  DeviceSnapshot snapshot = testing::G5Snapshot();
  const std::vector<std::string> uuids = FixtureUuids();
  for (size_t i = 0; i < uuids.size(); ++i) snapshot.devices[i].id = uuids[i];
  return snapshot;
}

kube::Pod PodWithIds(const std::string& namespace_name, const std::string& name, const std::string& ids) {
  kube::Pod pod;
  pod.metadata.namespace_name = namespace_name;
  pod.metadata.name = name;
  if (!ids.empty()) pod.metadata.annotations[std::string(kube::kGpuIdsAnnotation)] = ids;
  return pod;
}

TEST_CASE("HeldByPods: the GPU devices of each pod in the kubelet's List", "[agent][correction]") {
  if (!HaveKubeletFixtures()) return;
  v1::ListPodResourcesResponse list;
  REQUIRE(list.ParseFromString(ReadFixture("podresources.ListPodResourcesResponse.bin")));
  const std::vector<std::string> uuids = FixtureUuids();
  const std::vector<HeldDevices> held = HeldByPods(list, "nvidia.com/gpu");
  // node-exporter holds memory only and claim-user a DRA claim: neither holds nvidia.com/gpu devices.
  REQUIRE(held.size() == 2);
  CHECK(held[0].namespace_name == "ml");
  CHECK(held[0].name == "train-7f9c");
  CHECK(held[0].device_ids == std::vector<std::string>{uuids[0], uuids[1], uuids[2], uuids[3]});
  CHECK(held[1].name == "infer-0");
  CHECK(held[1].device_ids == std::vector<std::string>{uuids[5]});
  CHECK(HeldByPods(list, "example.com/fpga").empty());
}

TEST_CASE("CorrectionsFor: the annotation made to say what the pod holds", "[agent][correction]") {
  if (!HaveKubeletFixtures()) return;
  v1::ListPodResourcesResponse list;
  REQUIRE(list.ParseFromString(ReadFixture("podresources.ListPodResourcesResponse.bin")));
  const std::vector<HeldDevices> held = HeldByPods(list, "nvidia.com/gpu");
  const DeviceSnapshot node = FixtureNode();

  std::map<std::string, kube::Pod> pods;
  const auto find = [&pods](const std::string& ns, const std::string& name) -> std::optional<kube::Pod> {
    const auto it = pods.find(ns + "/" + name);
    return it == pods.end() ? std::nullopt : std::optional<kube::Pod>(it->second);
  };
  int skipped = 0;
  SECTION("both truthful (in any order): nothing to do") {
    pods["ml/train-7f9c"] = PodWithIds("ml", "train-7f9c", "3,2,1,0");
    pods["serving/infer-0"] = PodWithIds("serving", "infer-0", "5");
    CHECK(CorrectionsFor(held, node, find, &skipped).empty());
    CHECK(skipped == 0);
  }
  SECTION("one wrong (NVIDIA's plugin picked), one absent (another scheduler)") {
    pods["ml/train-7f9c"] = PodWithIds("ml", "train-7f9c", "4,5,6,7");
    pods["serving/infer-0"] = PodWithIds("serving", "infer-0", "");
    const std::vector<GpuIdsCorrection> corrections = CorrectionsFor(held, node, find, &skipped);
    REQUIRE(corrections.size() == 2);
    CHECK(corrections[0].name == "train-7f9c");
    CHECK(corrections[0].gpu_ids == "0,1,2,3");
    CHECK(corrections[0].was == "4,5,6,7");
    CHECK(corrections[1].name == "infer-0");
    CHECK(corrections[1].gpu_ids == "5");
    CHECK(corrections[1].was == "");
  }
  SECTION("a garbled annotation is corrected too") {
    pods["ml/train-7f9c"] = PodWithIds("ml", "train-7f9c", "0,1,2,banana");
    pods["serving/infer-0"] = PodWithIds("serving", "infer-0", "5");
    const std::vector<GpuIdsCorrection> corrections = CorrectionsFor(held, node, find, &skipped);
    REQUIRE(corrections.size() == 1);
    CHECK(corrections[0].gpu_ids == "0,1,2,3");
  }
  SECTION("a pod not known yet, and devices that are not this node's, are left for later") {
    pods["ml/train-7f9c"] = PodWithIds("ml", "train-7f9c", "");
    DeviceSnapshot other = node;
    other.devices[5].id = "GPU-not-the-fixture-one";
    CHECK(CorrectionsFor(held, other, find, &skipped).size() == 1);  // train only: infer unknown and foreign
    CHECK(skipped == 1);
  }
}

TEST_CASE("NotYetSent: a patch the pod cache has not shown yet is not sent again", "[agent][correction]") {
  const GpuIdsCorrection train{"ml", "train", "0,1", "6,7"};
  const GpuIdsCorrection infer{"serving", "infer", "5", ""};
  std::vector<GpuIdsCorrection> sent;
  CHECK(NotYetSent({train}, &sent) == std::vector<GpuIdsCorrection>{train});
  // The next round starts before the watch delivered the patch: the same mismatch, not sent twice.
  CHECK(NotYetSent({train, infer}, &sent) == std::vector<GpuIdsCorrection>{infer});
  CHECK(NotYetSent({train, infer}, &sent).empty());
  // The patch showed for train; then someone wrote 6,7 again: a correction like the first, sent again.
  CHECK(NotYetSent({infer}, &sent).empty());
  CHECK(NotYetSent({train, infer}, &sent) == std::vector<GpuIdsCorrection>{train});
  // Someone else wrote 4,5 over the annotation before our patch showed: the pod reads otherwise, so new.
  const GpuIdsCorrection train_overwritten{"ml", "train", "0,1", "4,5"};
  CHECK(NotYetSent({train_overwritten, infer}, &sent) == std::vector<GpuIdsCorrection>{train_overwritten});
}

}  // namespace
}  // namespace topofit::agent
