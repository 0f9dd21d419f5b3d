#include "decision/filter.h"

#include <catch2/catch.hpp>

#include "scheduler/gpu_state.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;
using scheduler::GpuState;
using scheduler::NewInMemoryGpuState;
using scheduler::PodRef;

// A state with one node, some of whose GPUs another of our pods holds.
std::shared_ptr<const NodeGpuSnapshot> NodeWith(GpuState& state, const kube::Node& node, topology::GpuSet held) {
  REQUIRE(state.UpsertNode(node).ok());
  if (!held.empty()) REQUIRE(state.Assume(PodRef{"holder", "default", "holder"}, node.metadata.name, held).ok());
  return state.Snapshot(node.metadata.name);
}

TEST_CASE("filter verdicts map onto FailedNodes and FailedAndUnresolvableNodes", "[filter]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  const auto p4d = NodeWith(*state, MakeNode().name("p4d").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8), {});
  const auto g5 = NodeWith(*state, MakeNode().name("g5").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8), {});
  std::unique_ptr<GpuState> busy_state = NewInMemoryGpuState();
  const auto busy = NodeWith(*busy_state, MakeNode().name("busy").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8),
                             topology::GpuSet::FromMask(0b00111111));

  struct Row {
    const char* name;
    kube::Pod pod;
    const NodeGpuSnapshot* node;
    bool fits;
    bool unresolvable;
    Refusal refusal;
    const char* reason;
  };
  const Row rows[] = {
      {"no GPUs: neutral", MakePod(), g5.get(), true, false, Refusal::kNone, ""},
      {"NVSwitch node, NV required", MakePod().gpus(4).annotation("topofit.io/min-link", "NV").annotation("topofit.io/topology-policy", "required"), p4d.get(), true, false, Refusal::kNone, ""},
      // g5.48xlarge is PCIe only: no emptying of the node gives NVLink
      {"PCIe node, NV required", MakePod().gpus(4).annotation("topofit.io/min-link", "NV").annotation("topofit.io/topology-policy", "required"), g5.get(), false, true,
       Refusal::kMinLink, "topofit: needs links of NV or better, best reachable is PHB even when empty (best set "},
      // preferred: the PCIe node is acceptable, the constraint only ranks
      {"PCIe node, NV preferred", MakePod().gpus(4).annotation("topofit.io/min-link", "NV"), g5.get(), true, false, Refusal::kNone, ""},
      // 6 of 8 held by another pod: evicting it would free them, so preemption may help
      {"busy node", MakePod().gpus(4), busy.get(), false, false, Refusal::kGpuCount, "topofit: needs 4 GPUs, 2 free (catalog:"},
      {"more GPUs than the node", MakePod().gpus(16), p4d.get(), false, true, Refusal::kNodeSize,
       "topofit: needs 16 GPUs, the node has 8 (catalog:"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      absl::StatusOr<GpuDemand> demand = DemandOf(row.pod);
      REQUIRE(demand.ok());
      const NodeVerdict verdict = FilterNode(*demand, *row.node);
      CHECK(verdict.fits == row.fits);
      CHECK(verdict.unresolvable == row.unresolvable);
      CHECK(verdict.refusal == row.refusal);
      CHECK_THAT(ReasonText(verdict, row.node->topology_origin), Catch::StartsWith(row.reason));
      CHECK(verdict.chosen.has_value() == (row.fits && demand->wants_gpus()));
    }
  }
}

}  // namespace
}  // namespace topofit::decision
