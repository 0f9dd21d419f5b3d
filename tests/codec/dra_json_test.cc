#include "codec/dra_json.h"

#include <catch2/catch.hpp>

#include "tests/kube/dra_fixtures.h"

namespace topofit::codec {
namespace {

using topofit::testing::DraFixture;

TEST_CASE("A v1 ResourceSlice of NVIDIA's driver: its node, pool and each GPU's attributes", "[dra]") {
  const absl::StatusOr<kube::ResourceSlice> slice = ResourceSliceFromJson(DraFixture("resourceslice-v1.json"));
  REQUIRE(slice.ok());
  CHECK(slice->metadata.name == "a100-node-1-gpu.nvidia.com-x7k2p");
  CHECK(slice->driver == "gpu.nvidia.com");
  CHECK(slice->node_name == "a100-node-1");
  CHECK(slice->pool == "a100-node-1");
  CHECK(slice->pool_generation == 1);
  REQUIRE(slice->devices.size() == 9);
  const kube::SliceDevice& gpu3 = slice->devices[3];
  CHECK(gpu3.name == "gpu-3");
  CHECK(gpu3.attributes.at("index").int_value == 3);
  CHECK(gpu3.attributes.at("uuid").string_value == "GPU-4c1f6d2e-0000-4000-8000-000000000003");
  CHECK(gpu3.attributes.at("cudaComputeCapability").version_value == "8.0.0");
  CHECK(gpu3.attributes.at("resource.kubernetes.io/pcieRoot").string_value == "pci0000:10");
  CHECK(slice->devices[8].attributes.at("parentUUID").string_value == "GPU-4c1f6d2e-0000-4000-8000-000000000007");
}

TEST_CASE("A v1beta1 ResourceSlice keeps each device's attributes under basic, and reads the same", "[dra]") {
  const absl::StatusOr<kube::ResourceSlice> slice = ResourceSliceFromJson(DraFixture("resourceslice-v1beta1.json"));
  REQUIRE(slice.ok());
  CHECK(slice->node_name == "a100-node-2");
  CHECK(slice->pool_generation == 3);
  REQUIRE(slice->devices.size() == 4);
  CHECK(slice->devices[1].attributes.at("index").int_value == 1);
}

TEST_CASE("An allocated ResourceClaim: its devices, its node and the pods it is reserved for", "[dra]") {
  const absl::StatusOr<kube::ResourceClaim> claim = ResourceClaimFromJson(DraFixture("resourceclaim-v1-allocated.json"));
  REQUIRE(claim.ok());
  CHECK(claim->metadata.namespace_name == "ml");
  CHECK(claim->allocated);
  CHECK(claim->node_name == "a100-node-1");
  REQUIRE(claim->devices.size() == 2);
  CHECK(claim->devices[0] == kube::AllocatedDevice{.request = "gpus", .driver = "gpu.nvidia.com", .pool = "a100-node-1",
                                                  .device = "gpu-2", .admin_access = false});
  REQUIRE(claim->reserved_for.size() == 1);
  CHECK(claim->reserved_for[0].resource == "pods");
  CHECK(claim->reserved_for[0].name == "trainer-0");

  const absl::StatusOr<kube::ResourceClaim> pending = ResourceClaimFromJson(DraFixture("resourceclaim-v1-pending.json"));
  REQUIRE(pending.ok());
  CHECK_FALSE(pending->allocated);
  CHECK(pending->devices.empty());
}

TEST_CASE("A ResourceClaim's requests and constraints, in v1's exactly and v1beta1's flat fields alike", "[dra]") {
  const absl::StatusOr<kube::ResourceClaim> v1 = ResourceClaimFromJson(DraFixture("resourceclaim-v1-allocated.json"));
  REQUIRE(v1.ok());
  REQUIRE(v1->requests.size() == 1);
  CHECK(v1->requests[0] == kube::DeviceRequest{.name = "gpus", .device_class_name = "gpu.nvidia.com",
                                               .allocation_mode = "ExactCount", .count = 2, .selectors = {},
                                               .admin_access = false, .first_available = false, .other_selector = false});
  REQUIRE(v1->constraints.size() == 1);
  CHECK(v1->constraints[0] == kube::DeviceConstraint{.requests = {"gpus"},
                                                     .match_attribute = "resource.kubernetes.io/pcieRoot", .other = false});

  const absl::StatusOr<kube::ResourceClaim> v1beta1 = ResourceClaimFromJson(nlohmann::json::parse(R"({
      "apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
      "metadata": {"name": "c", "namespace": "ml", "uid": "u"},
      "spec": {"devices": {
        "requests": [{"name": "gpus", "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 4,
                      "selectors": [{"cel": {"expression": "device.driver == \"gpu.nvidia.com\""}}]},
                     {"name": "any", "firstAvailable": [{"name": "big", "deviceClassName": "gpu.nvidia.com"}]}],
        "constraints": [{"matchAttribute": "gpu.nvidia.com/productName"}, {"distinctAttribute": "gpu.nvidia.com/uuid"}]}}})"));
  REQUIRE(v1beta1.ok());
  REQUIRE(v1beta1->requests.size() == 2);
  CHECK(v1beta1->requests[0].count == 4);
  CHECK(v1beta1->requests[0].selectors == std::vector<std::string>{"device.driver == \"gpu.nvidia.com\""});
  CHECK(v1beta1->requests[1].first_available);
  REQUIRE(v1beta1->constraints.size() == 2);
  CHECK(v1beta1->constraints[0].requests.empty());
  CHECK(v1beta1->constraints[0].match_attribute == "gpu.nvidia.com/productName");
  CHECK(v1beta1->constraints[1].other);
}

TEST_CASE("DRA objects whose read fields have the wrong type are refused with the field's path", "[dra]") {
  nlohmann::json slice = DraFixture("resourceslice-v1.json");
  slice["spec"]["devices"][2]["attributes"]["index"] = {{"int", "two"}};
  CHECK_THAT(std::string(ResourceSliceFromJson(slice).status().message()),
             Catch::Contains("spec.devices[2].attributes[\"index\"].int: expected an integer"));

  slice = DraFixture("resourceslice-v1.json");
  slice["spec"]["devices"][0]["attributes"]["index"] = {{"int", 0}, {"string", "0"}};
  CHECK_THAT(std::string(ResourceSliceFromJson(slice).status().message()), Catch::Contains("exactly one of int, bool, string and version"));

  nlohmann::json claim = DraFixture("resourceclaim-v1-allocated.json");
  claim["status"]["allocation"]["devices"]["results"] = {{"request", "gpus"}};
  CHECK_THAT(std::string(ResourceClaimFromJson(claim).status().message()),
             Catch::Contains("status.allocation.devices.results: expected an array"));
  CHECK_FALSE(ResourceClaimFromJson(nlohmann::json::array()).ok());
}

}  // namespace
}  // namespace topofit::codec
