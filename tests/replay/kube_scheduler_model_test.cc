#include "replay/kube_scheduler_model.h"

#include <catch2/catch.hpp>

#include "replay/dra_allocation.h"
#include "tests/replay/scenario.h"

namespace topofit::sim {
namespace {

using testing::Group;
using testing::NvPod;
using testing::Pod;

std::unique_ptr<World> MakeWorld(const Workload& workload, const std::string& policy) {
  for (const Policy& p : StandardPolicies({StockExpander::kLeastWaste})) {
    if (p.name != policy) continue;
    absl::StatusOr<std::unique_ptr<World>> world = World::Create(workload, p, 3);
    REQUIRE(world.ok());
    return *std::move(world);
  }
  FAIL("no policy " << policy);
  return nullptr;
}

TEST_CASE("How many feasible nodes kube-scheduler looks for", "[kube-scheduler]") {
  CHECK(KubeSchedulerModel::FeasibleNodesToFind(10) == 10);
  CHECK(KubeSchedulerModel::FeasibleNodesToFind(99) == 99);
  CHECK(KubeSchedulerModel::FeasibleNodesToFind(100) == 100);   // 50% of 100, at least 100
  CHECK(KubeSchedulerModel::FeasibleNodesToFind(1000) == 420);  // 50 - 1000/125 = 42%
  CHECK(KubeSchedulerModel::FeasibleNodesToFind(5000) == 500);  // 10%
  CHECK(KubeSchedulerModel::FeasibleNodesToFind(20000) == 1000);  // floor of 5%
}

TEST_CASE("LeastAllocated sends a pod to the emptier node", "[kube-scheduler]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2, 2)};
  workload.pods = {Pod("busy", 0, kHour, 1), Pod("next", 0, kHour, 1)};
  workload.pods[0].cpu_milli = 64000;
  std::unique_ptr<World> world = MakeWorld(workload, "stock");
  world->SetPending(0);
  world->StartPod(0, 0, topology::GpuSet::FirstN(1));
  world->SetPending(1);
  KubeSchedulerModel scheduler(*world);
  const PlacementDecision decision = scheduler.Schedule(1);
  CHECK(decision.node == 1);
  CHECK(decision.gpus.size() == 1);
}

// Two Ready g5 nodes (96 CPU, 768 GiB, 8 GPUs); one runs a pod of 16 CPU, 64 GiB and 4 GPUs. For the next
// pod (4 CPU, 16 GiB, 1 GPU), the tuned profile's MostAllocated (cpu 1, memory 1, nvidia.com/gpu 3):
//   busy node:  cpu 20000 x 100 / 96000 = 20, memory 80 x 100 / 768 = 10, GPUs 5 x 100 / 8 = 62
//               -> (20 + 10 + 3 x 62) / 5 = 43
//   empty node: cpu 4, memory 2, GPUs 12 -> (4 + 2 + 36) / 5 = 8
// so it packs onto the busy node, where the stock profile's LeastAllocated spreads to the empty one.
TEST_CASE("MostAllocated with GPUs packs a pod onto the fuller node, LeastAllocated spreads", "[kube-scheduler]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2, 2)};
  workload.pods = {Pod("busy", 0, kHour, 4), Pod("next", 0, kHour, 1)};
  workload.pods[0].cpu_milli = 16000;
  workload.pods[0].memory_mib = 64 * 1024;
  for (const auto& [policy, node] : {std::pair{"tuned", 0}, std::pair{"stock", 1}}) {
    INFO(policy);
    std::unique_ptr<World> world = MakeWorld(workload, policy);
    world->SetPending(0);
    world->StartPod(0, 0, topology::GpuSet::FirstN(4));
    world->SetPending(1);
    KubeSchedulerModel scheduler(*world);
    CHECK(scheduler.Schedule(1).node == node);
  }
}

TEST_CASE("With topofit's extender a 4-GPU NVLink pod gets an NVLink quad, without, the device plugin picks",
          "[kube-scheduler]") {
  Workload workload;
  workload.groups = {Group("cube", "p3.16xlarge", 8, 24.48, 1, 1)};  // DGX-1 V100 cube-mesh
  workload.pods = {NvPod("quad", 0, kHour, 4)};
  std::unique_ptr<World> world = MakeWorld(workload, "topofit");
  world->SetPending(0);
  KubeSchedulerModel scheduler(*world);
  const PlacementDecision decision = scheduler.Schedule(0);
  REQUIRE(decision.node == 0);
  const topology::Topology& cube = *world->nodes()[0].gpus.topology;
  for (topology::GpuId a : decision.gpus.ids()) {
    for (topology::GpuId b : decision.gpus.ids()) {
      if (a.value != b.value) CHECK(cube.link(a, b).link_class == topology::LinkClass::kNvLink);
    }
  }
}

TEST_CASE("The DRA allocator takes the lowest free GPUs, as many as asked or all there are", "[kube-scheduler][dra]") {
  const topology::GpuSet free = topology::GpuSet::FirstN(8).without(topology::GpuSet::FromMask(0b1001'0101));
  CHECK(DraFirstFit(free, 2).ToString() == "1,3");
  CHECK(DraFirstFit(free, 4).ToString() == "1,3,5,6");
  CHECK(DraFirstFit(free, 6).ToString() == "1,3,5,6");
  CHECK(DraFirstFit(free, 0).empty());
}

// DGX-1 V100: NVLink quads {0,1,2,3} and {4,5,6,7}. With GPU 0 taken, topofit's filter passes the node
// for the free quad, but under DRA kube-scheduler's allocator gives the first four free GPUs, across the
// two quads, as it does for the stock world's pod; topofit's GPU state then counts the set given.
TEST_CASE("Under DRA every pod gets the DRA allocator's first fit, those topofit's filter passed too",
          "[kube-scheduler][dra]") {
  Workload workload;
  workload.groups = {Group("cube", "p3.16xlarge", 8, 24.48, 1, 1)};
  workload.pods = {Pod("one", 0, kHour, 1), NvPod("quad", 0, kHour, 4)};
  for (const std::string policy : {"stock", "topofit"}) {
    INFO(policy);
    std::unique_ptr<World> world;
    for (const Policy& p : StandardPolicies({StockExpander::kLeastWaste})) {
      if (p.name == policy) world = *World::Create(workload, UseDra(p), 3);
    }
    REQUIRE(world != nullptr);
    world->SetPending(0);
    world->StartPod(0, 0, topology::GpuSet::FirstN(1));
    world->SetPending(1);
    KubeSchedulerModel scheduler(*world);
    const PlacementDecision decision = scheduler.Schedule(1);
    REQUIRE(decision.node == 0);
    CHECK(decision.gpus.ToString() == "1,2,3,4");
    CHECK(scheduler.gpu_sets_not_as_chosen() == (policy == "topofit" ? 1 : 0));
  }
}

TEST_CASE("Under DRA a GPU pod names a claim and requests no nvidia.com/gpu, as CA and the expander see it",
          "[kube-scheduler][dra]") {
  Workload workload;
  workload.groups = {Group("cube", "p3.16xlarge", 8, 24.48, 1, 1)};
  workload.pods = {NvPod("quad", 0, kHour, 4), Pod("cpu", 0, kHour, 0)};
  const Policy dra = UseDra(StockPolicy({StockExpander::kLeastWaste}));
  std::unique_ptr<World> world = *World::Create(workload, dra, 3);
  const kube::Pod quad = world->PodObject(0);
  REQUIRE(quad.spec.resource_claims.size() == 1);
  CHECK(quad.spec.resource_claims[0].resource_claim_template_name == "gpus-4");
  for (const kube::Container& container : quad.spec.containers) {
    CHECK(container.resources.requests.count(kube::kResourceNvidiaGpu) == 0);
    CHECK(container.resources.limits.count(kube::kResourceNvidiaGpu) == 0);
  }
  CHECK(world->PodObject(1).spec.resource_claims.empty());
}

TEST_CASE("Under DRA topofit's extender runs only filter and prioritize for claim pods", "[policy][dra]") {
  const Policy topofit = StandardPolicies({StockExpander::kLeastWaste}).back();
  REQUIRE(topofit.name == "topofit");
  REQUIRE(topofit.places_gangs_whole());
  const Policy dra = UseDra(topofit);
  CHECK(dra.topofit_extender);
  CHECK(dra.topology_score);
  CHECK(dra.capacity_holds);  // new capacity is held for the claim pods it was grown for
  CHECK_FALSE(dra.provisioning_requests);
  CHECK_FALSE(dra.drain_guard);
  CHECK(dra.capacity_wait.max_wait == absl::ZeroDuration());
  CHECK_FALSE(dra.places_gangs_whole());
  CHECK(UseDra(TunedPolicy("tuned", {StockExpander::kLeastWaste})).places_gangs_whole());  // its gang scheduler
}

TEST_CASE("The extender refuses a PCIe node for an NVLink pod: refused for topology, node named", "[kube-scheduler]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 1, 1)};
  workload.pods = {NvPod("quad", 0, kHour, 4)};
  std::unique_ptr<World> world = MakeWorld(workload, "topofit");
  world->SetPending(0);
  KubeSchedulerModel scheduler(*world);
  const PlacementDecision decision = scheduler.Schedule(0);
  CHECK(decision.node == -1);
  CHECK(decision.refused_for_topology);
  CHECK(decision.refused_nodes == std::vector<int>{0});
}

// A g5 (PCIe) busy with a 4-GPU pod and an empty p4d (NVSwitch), one Ready node each. A 2-GPU pod that only
// prefers NVLink: MostAllocated alone packs it onto the busy g5 (as in the case above, about 43 against a
// few points); the tuned operator's preferred node affinity for the groups that give NVLink adds
// NodeAffinity's 2 x 100 to the p4d, which wins. A pod that asks for no topology carries none and packs.
TEST_CASE("tuned: a pod that prefers NVLink carries preferred node affinity, which kube-scheduler scores",
          "[kube-scheduler]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 1, 1), Group("nvlink", "p4d.24xlarge", 8, 32.77, 1, 1)};
  PodSpec prefers = NvPod("prefers", 0, kHour, 2);
  prefers.topology_policy = "preferred";
  workload.pods = {Pod("busy", 0, kHour, 4), prefers, Pod("plain", 0, kHour, 2)};
  workload.pods[0].cpu_milli = 16000;
  workload.pods[0].memory_mib = 64 * 1024;
  for (const auto& [policy, node] : {std::pair{"tuned", 1}, std::pair{"topofit", 0}}) {
    INFO(policy);
    std::unique_ptr<World> world = MakeWorld(workload, policy);
    world->SetPending(0);
    world->StartPod(0, 0, topology::GpuSet::FirstN(4));
    world->SetPending(1);
    world->SetPending(2);
    CHECK(world->PodObject(1).spec.preferred_node_affinity.empty() == (node == 0));
    CHECK(world->PodObject(2).spec.preferred_node_affinity.empty());
    if (node == 0) continue;  // topofit's extender decides there; only the affinity is checked
    KubeSchedulerModel scheduler(*world);
    CHECK(scheduler.Schedule(1).node == node);
    CHECK(scheduler.Schedule(2).node == 0);
  }
}

}  // namespace
}  // namespace topofit::sim

namespace topofit::sim {
namespace {

TEST_CASE("Tainted GPU nodes take GPU pods (which tolerate the taint) and keep the others off", "[kube-scheduler]") {
  Workload workload;
  NodeGroupSpec gpu = testing::Group("gpu", "p4d.24xlarge", 8, 32.77, 1, 1);
  gpu.taints = {"nvidia.com/gpu=present:NoSchedule"};
  workload.groups = {gpu};
  workload.pods = {testing::Pod("web", 0, kHour, 0), testing::Pod("train", 0, kHour, 1)};
  std::unique_ptr<World> world = MakeWorld(workload, "stock");
  world->SetPending(0);
  world->SetPending(1);
  KubeSchedulerModel scheduler(*world);
  CHECK(scheduler.Schedule(0).node == -1);
  CHECK(scheduler.Schedule(1).node == 0);
}

TEST_CASE("A malformed taint is an error naming the group", "[kube-scheduler]") {
  Workload workload;
  NodeGroupSpec gpu = testing::Group("gpu", "p4d.24xlarge", 8, 32.77, 1, 1);
  gpu.taints = {"nvidia.com/gpu=present:Sometimes"};
  workload.groups = {gpu};
  absl::StatusOr<std::unique_ptr<World>> world = World::Create(workload, StandardPolicies({})[0], 1);
  REQUIRE_FALSE(world.ok());
  CHECK_THAT(std::string(world.status().message()), Catch::Contains("node group gpu"));
  CHECK_THAT(std::string(world.status().message()), Catch::Contains("effect must be"));
}

}  // namespace
}  // namespace topofit::sim
