#include "bench/sim/autoscaler_model.h"

#include <catch2/catch.hpp>

#include "tests/sim/scenario.h"

namespace topofit::sim {
namespace {

using testing::Group;
using testing::Pod;

std::unique_ptr<World> MakeWorld(const Workload& workload) {
  absl::StatusOr<std::unique_ptr<World>> world =
      World::Create(workload, StandardPolicies({StockExpander::kLeastWaste})[0], 1);
  REQUIRE(world.ok());
  return *std::move(world);
}

// The scheduler refused the pod (for whatever reason): CA now sees it as unschedulable.
void MarkUnschedulable(World& world, int pod) {
  world.SetPending(pod);
  world.pods()[pod].unschedulable = true;
}

TEST_CASE("CA does not scale up for a pod that fits an existing node by count", "[autoscaler]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 2)};
  workload.pods = {Pod("big", 0, kHour, 4)};
  std::unique_ptr<World> world = MakeWorld(workload);
  MarkUnschedulable(*world, 0);
  world->AdvanceTo(kMinute);
  AutoscalerModel autoscaler(*world, {});
  CHECK_FALSE(autoscaler.RunLoop({}, true).scale_up.has_value());
}

TEST_CASE("CA scales up once the existing node is full by count, one node of the chosen group", "[autoscaler]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2, 1)};
  workload.pods = {Pod("filler", 0, kHour, 6), Pod("big", 0, kHour, 4), Pod("also", 0, kHour, 4)};
  std::unique_ptr<World> world = MakeWorld(workload);
  world->SetPending(0);
  world->StartPod(0, 0, topology::GpuSet::FirstN(6));
  MarkUnschedulable(*world, 1);
  MarkUnschedulable(*world, 2);
  AutoscalerModel autoscaler(*world, {});
  world->AdvanceTo(10 * kSecond);
  CHECK_FALSE(autoscaler.RunLoop({}, true).scale_up.has_value());  // GPU pods younger than 30 s: CA waits
  world->AdvanceTo(30 * kSecond);
  const AutoscalerActions actions = autoscaler.RunLoop({}, true);
  REQUIRE(actions.scale_up.has_value());
  CHECK(actions.scale_up->group == 0);
  CHECK(actions.scale_up->node_count == 1);  // both 4-GPU pods binpack onto one 8-GPU template
  CHECK(actions.scale_up->pods == std::vector<int>{1, 2});
}

TEST_CASE("An upcoming node absorbs pending pods in CA's simulation", "[autoscaler]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 3)};
  workload.pods = {Pod("a", 0, kHour, 4)};
  std::unique_ptr<World> world = MakeWorld(workload);
  world->AddNode(0, -1);  // requested, not Ready yet
  MarkUnschedulable(*world, 0);
  world->AdvanceTo(kMinute);
  AutoscalerModel autoscaler(*world, {});
  CHECK_FALSE(autoscaler.RunLoop({}, true).scale_up.has_value());
}

TEST_CASE("Scale-down: GPU nodes judged on GPUs, a busy node is drained only if its pods fit elsewhere", "[autoscaler]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 3, 2)};
  workload.pods = {Pod("a", 0, 10 * kHour, 3), Pod("b", 0, 10 * kHour, 1)};
  std::unique_ptr<World> world = MakeWorld(workload);
  world->SetPending(0);
  world->StartPod(0, 0, topology::GpuSet::FirstN(3));
  world->SetPending(1);
  world->StartPod(1, 1, topology::GpuSet::FirstN(1));
  AutoscalerModel autoscaler(*world, {});
  CHECK(autoscaler.RunLoop({}, true).drain == -1);  // unneeded from now
  world->AdvanceTo(10 * kMinute - kSecond);
  CHECK(autoscaler.RunLoop({}, false).drain == -1);
  world->AdvanceTo(10 * kMinute);
  // Both are at or below half their GPUs; node 0 was found unneeded first (lower utilisation is node 1,
  // 1/8, so it is the candidate whose pod moves to node 0).
  const AutoscalerActions actions = autoscaler.RunLoop({}, false);
  CHECK(actions.drain == 1);
  CHECK(actions.remove_empty.empty());
}

}  // namespace
}  // namespace topofit::sim
