#include "replay/workloads/cloud_gpu_fleet.h"

#include <catch2/catch.hpp>

#include "tests/kube/status_matchers.h"
#include "tests/replay/workloads/workload_testing.h"

namespace topofit::sim {
namespace {

TEST_CASE("every GPU group of the cloud fleet resolves to its catalog shape with the GPUs it claims",
          "[cloud_gpu_fleet]") {
  const std::vector<NodeGroupSpec> fleet = CloudGpuFleet(7);
  REQUIRE(fleet.size() == 6);
  for (const NodeGroupSpec& group : fleet) {
    INFO(group.name);
    CHECK(group.min_size == 0);
    CHECK(group.initial_size == 0);
    CHECK(group.max_size == 7);
    CHECK(group.price_per_hour > 0);
    if (group.gpus == 0) continue;  // m5.8xlarge, for pods without GPUs
    const absl::StatusOr<topology::LabelledTopology> resolved = testing::GroupTopology(group);
    REQUIRE_OK(resolved);
    CHECK_FALSE(resolved->fallback);
    CHECK(resolved->topology.gpu_count() == group.gpus);
    CHECK(resolved->topology.gpus()[0].product == group.gpu_product);
  }
}

TEST_CASE("the cloud fleet's NVLink lives on the p5 and p4d groups only", "[cloud_gpu_fleet]") {
  for (const NodeGroupSpec& group : CloudGpuFleet(1)) {
    if (group.gpus == 0) continue;
    INFO(group.name);
    const absl::StatusOr<topology::LabelledTopology> resolved = testing::GroupTopology(group);
    REQUIRE_OK(resolved);
    CHECK(resolved->topology.has_nvswitch() == (group.name == "p5.48xlarge" || group.name == "p4d.24xlarge"));
  }
}

}  // namespace
}  // namespace topofit::sim
