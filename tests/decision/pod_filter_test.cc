#include "decision/pod_filter.h"

#include <memory>

#include <catch2/catch.hpp>

#include "scheduler/gpu_state.h"
#include "tests/decision/p4d_scale_up.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;
using testing::kIntentSeconds;
using testing::P4d;
using testing::P4dIntentFor;

// An old p4d, one a scale-up for `uid-trainer` (8 GPUs) brought, and a g5 (PCIe only): the extender's state.
struct Cluster {
  std::unique_ptr<scheduler::GpuState> state = scheduler::NewInMemoryGpuState();
  Cluster() {
    REQUIRE(state->UpsertNode(P4d("old", kIntentSeconds - 3600)).ok());
    REQUIRE(state->UpsertNode(P4d("new", kIntentSeconds + 300)).ok());
    REQUIRE(state->UpsertNode(MakeNode().name("g5").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  }
  const NodeGpuSnapshot* operator[](const char* name) const { return state->Snapshot(name).get(); }
  CapacityHolds Holds() const {
    Preference trainer;
    trainer.pod_uid = "uid-trainer";
    trainer.pod_key = "ml/trainer";
    trainer.gpus = 8;
    return CapacityHolds({P4dIntentFor({{"uid-trainer", 8}})}, {trainer}, {(*this)["old"], (*this)["new"], (*this)["g5"]});
  }
};

TEST_CASE("FilterPod: each node's verdict in the order offered, and what they say together", "[pod_filter]") {
  Cluster c;
  const CapacityHolds holds = c.Holds();
  FilterMemo memo;
  const kube::Pod web = MakePod().name("web").gpus(1);

  const PodFilterOutcome both = FilterPod(*DemandOf(web), {"uid-web"}, {c["new"], c["old"]}, holds, memo);
  REQUIRE(both.verdicts.size() == 2);
  CHECK(both.verdicts[0].refusal == Refusal::kHeldForScaleUp);
  CHECK(both.verdicts[1].fits);
  CHECK(both.fitting == 1);
  CHECK(both.any_fits());
  CHECK(both.held_back);  // a hold refused one of them
  CHECK_FALSE(both.asking_for_capacity());
  // It fits a node: nothing is left for the autoscaling side.
  CHECK_FALSE(UnplacedAfter(web, *DemandOf(web), both, {"new"}).has_value());

  // Offered only the held node: refused, and held back — CA is right that it fits there once the trainer
  // lands, so it asks for no capacity of its own; its preference still goes to the ledger.
  const PodFilterOutcome held = FilterPod(*DemandOf(web), {"uid-web"}, {c["new"]}, holds, memo);
  CHECK_FALSE(held.any_fits());
  const std::optional<UnplacedPod> waiting = UnplacedAfter(web, *DemandOf(web), held, {"new"});
  REQUIRE(waiting.has_value());
  CHECK_FALSE(waiting->needs_capacity_request);
  CHECK(waiting->preference.refused_nodes == std::vector<std::string>{"new"});
  CHECK(waiting->preference.gpus == 1);
}

TEST_CASE("UnplacedAfter: a pod refused for its topology needs capacity of its own, unless nothing refused it",
          "[pod_filter]") {
  Cluster c;
  FilterMemo memo;
  const kube::Pod nv = MakePod().name("trainer").gpus(8).annotation("topofit.io/min-link", "NV")
                           .annotation("topofit.io/topology-policy", "required");
  const PodFilterOutcome refused = FilterPod(*DemandOf(nv), {"uid-trainer"}, {c["g5"]}, CapacityHolds(), memo);
  REQUIRE(refused.verdicts.size() == 1);
  CHECK(refused.verdicts[0].refusal == Refusal::kMinLink);
  CHECK_FALSE(refused.held_back);
  CHECK(refused.preferred_set == PreferredSet::kEnforced);
  const std::optional<UnplacedPod> unplaced = UnplacedAfter(nv, *DemandOf(nv), refused, {"g5"});
  REQUIRE(unplaced.has_value());
  CHECK(unplaced->needs_capacity_request);  // CA, counting GPUs, would place it on the g5 and never grow
  CHECK(unplaced->preference.min_link == topology::LinkClass::kNvLink);
  // No node offered: there is nothing CA would place it on instead, so no request.
  const PodFilterOutcome none = FilterPod(*DemandOf(nv), {"uid-trainer"}, {}, CapacityHolds(), memo);
  CHECK_FALSE(UnplacedAfter(nv, *DemandOf(nv), none, {})->needs_capacity_request);
  // A pod without GPUs leaves nothing behind.
  const kube::Pod cpu = MakePod().name("cpu");
  CHECK_FALSE(UnplacedAfter(cpu, *DemandOf(cpu), FilterPod(*DemandOf(cpu), {"uid-cpu"}, {}, CapacityHolds(), memo), {}));
}

}  // namespace
}  // namespace topofit::decision
