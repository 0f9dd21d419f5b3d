#include "replay/autoscaler_model.h"

#include <catch2/catch.hpp>

#include "decision/capacity_shapes.h"
#include "tests/replay/scenario.h"

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

// best-effort-atomic: CA first books existing or upcoming capacity the request's template admits. A g5
// node still booting was never offered to the extender, so excluding the nodes it refused leaves it in;
// confined to the p4d shape (decision::ShapeTermsFor), the request grows a p4d node instead.
TEST_CASE("A ProvisioningRequest confined to a shape is not booked on a node of another, and grows its shape",
          "[autoscaler]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 1)};
  workload.pods = {Pod("train", 0, kHour, 4)};
  for (const bool confined : {false, true}) {
    DYNAMIC_SECTION((confined ? "confined to p4d" : "refused nodes excluded only")) {
      std::unique_ptr<World> world = MakeWorld(workload);
      world->AddNode(0, -1);  // a second g5, requested, not Ready yet
      MarkUnschedulable(*world, 0);
      ProvisioningRequest request;
      request.pods = {0};
      request.excluded_nodes = {0};  // the Ready g5 the extender refused
      if (confined) {
        const std::optional<kube::NodeSelectorTerm> p4d = decision::ShapeTerm(world->groups()[1].template_node.metadata.labels);
        REQUIRE(p4d.has_value());
        request.shapes = {*p4d};
      }
      const int index = world->CreateRequest(std::move(request));
      world->AdvanceTo(kMinute);
      AutoscalerModel autoscaler(*world, {});
      const AutoscalerActions actions = autoscaler.RunLoop({}, true);
      CHECK(world->provisioning_requests()[index].provisioned_at == kMinute);
      if (confined) {
        REQUIRE(actions.scale_up.has_value());
        CHECK(actions.scale_up->group == 1);
      } else {
        CHECK_FALSE(actions.scale_up.has_value());  // booked on the booting g5, which the extender refuses
      }
    }
  }
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
