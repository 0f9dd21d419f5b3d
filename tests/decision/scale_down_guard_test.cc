#include "decision/scale_down_guard.h"

#include <catch2/catch.hpp>

#include "scheduler/gpu_state.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;

GpuDemand DemandWith(int gpus, std::initializer_list<std::pair<const char*, const char*>> annotations) {
  kube::testing::PodBuilder pod = MakePod().name("p").gpus(gpus);
  for (const auto& [key, value] : annotations) pod.annotation(key, value);
  absl::StatusOr<GpuDemand> demand = DemandOf(pod);
  REQUIRE(demand.ok());
  return *demand;
}

const topology::SetQuality kNvSwitch{.bandwidth_mbps = 240000, .weakest = topology::LinkClass::kNvLink};
const topology::SetQuality kPcie{.bandwidth_mbps = 20000, .weakest = topology::LinkClass::kPhb};

TEST_CASE("Pods that got the topology they would refuse or wait for elsewhere are kept from CA's drains",
          "[scale_down_guard]") {
  // Required: any poorer node refuses it, so CA's drain would only make it grow this node again.
  const GpuDemand required = DemandWith(4, {{"topofit.io/min-link", "NV"}, {"topofit.io/topology-policy", "required"}});
  CHECK(KeepFromScaleDownDrain(required, kNvSwitch));
  // Preferred with a declared run time: it waits for (and asks for) the NVLink it prefers.
  const GpuDemand asking = DemandWith(4, {{"topofit.io/min-link", "NV"}, {"topofit.io/expected-runtime", "2h"}});
  CHECK(KeepFromScaleDownDrain(asking, kNvSwitch));
  CHECK(KeepFromScaleDownDrain(DemandWith(4, {{"topofit.io/min-bandwidth", "100GB/s"}, {"topofit.io/expected-runtime", "2h"}}),
                               kNvSwitch));
}

TEST_CASE("Pods that take the best set now, or already run below their ask, stay CA's to move", "[scale_down_guard]") {
  // Preferred without a run time: it would take a poorer set at once, no scale-up follows.
  CHECK_FALSE(KeepFromScaleDownDrain(DemandWith(4, {{"topofit.io/min-link", "NV"}}), kNvSwitch));
  // No topology asked: every set serves it alike.
  CHECK_FALSE(KeepFromScaleDownDrain(DemandWith(4, {}), kNvSwitch));
  CHECK_FALSE(KeepFromScaleDownDrain(DemandWith(1, {}), {}));
  // It already runs on PCIe (placed there when waiting did not pay): moving it loses no topology.
  CHECK_FALSE(KeepFromScaleDownDrain(DemandWith(4, {{"topofit.io/min-link", "NV"}, {"topofit.io/expected-runtime", "2h"}}),
                                     kPcie));
  CHECK_FALSE(KeepFromScaleDownDrain(DemandWith(4, {{"topofit.io/min-bandwidth", "100GB/s"}, {"topofit.io/expected-runtime", "2h"}}),
                                     kPcie));
}

TEST_CASE("Only a busy node with a free set that meets the ask gives a drained pod somewhere to go", "[scale_down_guard]") {
  std::unique_ptr<scheduler::GpuState> state = scheduler::NewInMemoryGpuState();
  for (const char* name : {"p4d-busy", "p4d-empty"}) {
    REQUIRE(state->UpsertNode(MakeNode().name(name).label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8)).ok());
  }
  REQUIRE(state->UpsertNode(MakeNode().name("g5-busy").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  REQUIRE(state->Assume({"uid-a", "ml", "a"}, "g5-busy", topology::GpuSet::FirstN(2)).ok());
  REQUIRE(state->Assume({"uid-b", "ml", "b"}, "p4d-busy", topology::GpuSet::FirstN(5)).ok());
  const GpuDemand required = DemandWith(4, {{"topofit.io/min-link", "NV"}, {"topofit.io/topology-policy", "required"}});
  const GpuDemand asking = DemandWith(4, {{"topofit.io/min-link", "NV"}, {"topofit.io/expected-runtime", "2h"}});
  const auto g5 = state->Snapshot("g5-busy");
  const auto busy = state->Snapshot("p4d-busy");
  const auto empty = state->Snapshot("p4d-empty");

  // The g5 has 6 GPUs free but no NVLink; the empty p4d is the next node CA removes; the busy p4d has 3.
  FilterMemo memo;
  CHECK_FALSE(AnotherNodeGivesItsTopology(required, "p4d-own", {g5.get(), empty.get(), busy.get()}, memo));
  CHECK_FALSE(AnotherNodeGivesItsTopology(asking, "p4d-own", {g5.get(), empty.get(), busy.get()}, memo));
  REQUIRE(state->Forget("uid-b"));
  REQUIRE(state->Assume({"uid-b", "ml", "b"}, "p4d-busy", topology::GpuSet::FirstN(4)).ok());
  const auto half = state->Snapshot("p4d-busy");
  FilterMemo fresh;  // the nodes changed
  CHECK(AnotherNodeGivesItsTopology(required, "p4d-own", {g5.get(), half.get()}, fresh));
  CHECK(AnotherNodeGivesItsTopology(asking, "p4d-own", {half.get()}, fresh));  // judged on the ask, as if required
  // Its own node is never somewhere else to go.
  CHECK_FALSE(AnotherNodeGivesItsTopology(required, "p4d-busy", {g5.get(), half.get()}, fresh));
}

}  // namespace
}  // namespace topofit::decision
