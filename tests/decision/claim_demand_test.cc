#include "decision/claim_demand.h"

#include <map>

#include <catch2/catch.hpp>

#include "tests/decision/claim_builders.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakePod;
using namespace testing;  // NOLINT: the claim builders

TEST_CASE("A claim made from a template: its GPU count and its matchAttribute", "[claim_demand]") {
  const Claims claims = Claims().Add(
      Claim("trainer-0-gpus-7hq2d", {Gpus("gpus", 2)}, {MatchAttribute("resource.kubernetes.io/pcieRoot")}));
  const kube::Pod pod = PodNaming(
      {{.name = "gpus", .resource_claim_name = std::nullopt, .resource_claim_template_name = "two-gpus-one-root"}},
      {{.name = "gpus", .resource_claim_name = "trainer-0-gpus-7hq2d"}});
  const absl::StatusOr<std::optional<ClaimGpuDemand>> demand = claims.DemandOf(pod);
  REQUIRE(demand.ok());
  REQUIRE(demand->has_value());
  CHECK(**demand == ClaimGpuDemand{.gpus = 2, .all = false, .selectors = {},
                                   .match_attributes = {"resource.kubernetes.io/pcieRoot"}});
}

TEST_CASE("GPU requests of several claims add up, other devices and monitoring access take no GPU", "[claim_demand]") {
  kube::DeviceRequest nic = Gpus("nic", 1);
  nic.device_class_name = "sriov-nic.example.com";
  kube::DeviceRequest monitor = Gpus("monitor", 1);
  monitor.admin_access = true;
  kube::DeviceRequest by_driver = Gpus("by-driver", 1, {R"(device.driver == "gpu.nvidia.com")"});
  by_driver.device_class_name = "gpu-any.example.com";  // the driver in the selector makes it a GPU request
  const Claims claims = Claims()
                            .Add(Claim("a", {Gpus("gpus", 3, {R"(device.driver == "gpu.nvidia.com")"}), nic, monitor}))
                            .Add(Claim("b", {by_driver}));
  const absl::StatusOr<std::optional<ClaimGpuDemand>> demand = claims.DemandOf(PodNaming({Named("a", "a"), Named("b", "b")}));
  REQUIRE(demand.ok());
  REQUIRE(demand->has_value());
  CHECK((*demand)->gpus == 4);
  REQUIRE((*demand)->selectors.size() == 1);
  CHECK((*demand)->selectors[0].driver == "gpu.nvidia.com");
}

TEST_CASE("No GPU through claims: no claims, only other devices, or claims allocated already", "[claim_demand]") {
  kube::DeviceRequest nic = Gpus("nic", 1);
  nic.device_class_name = "sriov-nic.example.com";
  kube::ResourceClaim allocated = Claim("shared", {Gpus("gpus", 2)});
  allocated.allocated = true;
  const Claims claims = Claims().Add(Claim("nic", {nic})).Add(allocated);
  for (const kube::Pod& pod : {PodNaming({}), PodNaming({Named("nic", "nic")}), PodNaming({Named("shared", "shared")})}) {
    const absl::StatusOr<std::optional<ClaimGpuDemand>> demand = claims.DemandOf(pod);
    REQUIRE(demand.ok());
    CHECK_FALSE(demand->has_value());
  }
}

TEST_CASE("What cannot be judged is said so, naming the claim and the part", "[claim_demand]") {
  kube::DeviceRequest alternatives = Gpus("gpus", 1);
  alternatives.device_class_name = "";
  alternatives.first_available = true;
  kube::DeviceRequest unknown_mode = Gpus("gpus", 1);
  unknown_mode.allocation_mode = "AtLeast";
  kube::DeviceRequest all = Gpus("all", 1);
  all.allocation_mode = "All";
  kube::DeviceConstraint distinct{.requests = {}, .match_attribute = std::nullopt, .other = true};
  struct Row {
    const char* name;
    kube::ResourceClaim claim;
    const char* message;
  };
  const Row rows[] = {
      {"CEL outside the subset", Claim("c", {Gpus("gpus", 2, {R"(device.attributes["gpu.nvidia.com"].productName.matches("H1.*"))"})}),
       "ResourceClaim ml/c: request gpus: CEL selector"},
      {"firstAvailable", Claim("c", {alternatives}), "ResourceClaim ml/c: request gpus lists alternatives (firstAvailable)"},
      {"an unknown allocation mode", Claim("c", {unknown_mode}), "allocationMode AtLeast is neither ExactCount nor All"},
      {"ExactCount and All", Claim("c", {Gpus("gpus", 1), all}), "both ExactCount and All"},
      {"different selectors", Claim("c", {Gpus("a", 1), Gpus("b", 1, {R"(device.driver == "gpu.nvidia.com")"})}),
       "different selectors"},
      {"distinctAttribute", Claim("c", {Gpus("gpus", 2)}, {distinct}), "a constraint other than matchAttribute"},
      {"matchAttribute over part of the GPUs",
       Claim("c", {Gpus("a", 1), Gpus("b", 1)}, {MatchAttribute("resource.kubernetes.io/pcieRoot", {"a"})}),
       "over some of the pod's GPU requests but not all"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const absl::StatusOr<std::optional<ClaimGpuDemand>> demand =
          Claims().Add(row.claim).DemandOf(PodNaming({Named("c", "c")}));
      REQUIRE_FALSE(demand.ok());
      CHECK(demand.status().code() == absl::StatusCode::kInvalidArgument);
      CHECK_THAT(std::string(demand.status().message()), Catch::Contains(row.message));
    }
  }
}

TEST_CASE("A claim not known yet, or a template's claim not made yet: the pod waits", "[claim_demand]") {
  const Claims none;
  absl::StatusOr<std::optional<ClaimGpuDemand>> demand = none.DemandOf(PodNaming({Named("gpus", "missing")}));
  CHECK(demand.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(demand.status().message()), Catch::Contains("ResourceClaim ml/missing is not known yet"));
  demand = none.DemandOf(PodNaming(
      {{.name = "gpus", .resource_claim_name = std::nullopt, .resource_claim_template_name = "two-gpus"}}));
  CHECK(demand.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(demand.status().message()), Catch::Contains("template two-gpus"));
}

}  // namespace
}  // namespace topofit::decision
