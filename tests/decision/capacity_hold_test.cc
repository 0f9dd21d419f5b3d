#include "decision/capacity_hold.h"
#include "decision/pod_filter.h"

#include <map>

#include <catch2/catch.hpp>

#include "scheduler/gpu_state.h"
#include "tests/decision/p4d_scale_up.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakePod;
using testing::kIntentSeconds;
using testing::P4d;
using testing::P4dIntentFor;
using scheduler::GpuState;
using scheduler::NewInMemoryGpuState;

Preference PendingPod(const std::string& name, int gpus) {
  Preference preference;
  preference.pod_uid = "uid-" + name;
  preference.pod_key = "ml/" + name;
  preference.gpus = gpus;
  return preference;
}

TEST_CASE("A node a scale-up brought keeps enough free GPUs for the pods it was bought for", "[capacity_hold]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  REQUIRE(state->UpsertNode(P4d("new", kIntentSeconds + 300)).ok());
  REQUIRE(state->UpsertNode(P4d("old", kIntentSeconds - 3600)).ok());
  REQUIRE(state->UpsertNode(P4d("newer", kIntentSeconds + 400)).ok());
  const NodeGpuSnapshot& fresh = *state->Snapshot("new");
  const NodeGpuSnapshot& newer = *state->Snapshot("newer");
  const std::vector<const NodeGpuSnapshot*> nodes = {state->Snapshot("old").get(), &newer, &fresh};
  const CapacityHolds holds({P4dIntentFor({{"uid-trainer", 8}})}, {PendingPod("trainer", 8)}, nodes);

  FilterMemo memo;
  // JudgeNode's verdict for a pod wanting `gpus` on `node`: refused by a hold, or not.
  auto held = [&memo](const CapacityHolds& h, const char* uid, int gpus, const NodeGpuSnapshot& node) {
    const kube::Pod pod = MakePod().gpus(gpus);
    return JudgeNode(*DemandOf(pod), {uid}, node, h, memo).refusal == Refusal::kHeldForScaleUp;
  };

  const NodeVerdict refused = JudgeNode(*DemandOf(MakePod().gpus(1)), {"uid-web"}, fresh, holds, memo);
  REQUIRE(refused.refusal == Refusal::kHeldForScaleUp);
  CHECK(refused.unresolvable);  // preemption cannot free GPUs held for pods not running yet
  CHECK(refused.held_gpus == 8);
  CHECK(refused.free_gpus == 8);
  CHECK(JudgedReasonText(refused, {"uid-web"}, fresh, holds) ==
        "topofit: 8 of the node's 8 free GPUs are held for the pods a scale-up brought it for "
        "(node group p4d-group scaled up for ml/trainer)");
  CHECK_FALSE(held(holds, "uid-trainer", 8, fresh));              // the pod it was bought for
  CHECK(JudgeNode(*DemandOf(MakePod()), {"uid-web"}, fresh, holds, memo).fits);  // no GPUs asked, none taken
  CHECK_FALSE(held(holds, "uid-web", 1, *state->Snapshot("old")));  // existed before the intent
  // A one-node scale-up brought one node, its first: a later node of the group came with another
  // scale-up, for other pods.
  CHECK_FALSE(held(holds, "uid-web", 1, newer));

  SECTION("only the pending demand is held: a 2-GPU intent leaves room for others") {
    const CapacityHolds small({P4dIntentFor({{"uid-trainer", 2}})}, {PendingPod("trainer", 2)}, nodes);
    CHECK_FALSE(held(small, "uid-web", 6, fresh));
    CHECK(held(small, "uid-web", 7, fresh));
  }
  SECTION("without a preference the reason names the pod by uid") {
    const CapacityHolds by_uid({P4dIntentFor({{"uid-trainer", 8}})}, {}, nodes);
    const NodeVerdict verdict = JudgeNode(*DemandOf(MakePod().gpus(1)), {"uid-web"}, fresh, by_uid, memo);
    CHECK_THAT(JudgedReasonText(verdict, {"uid-web"}, fresh, by_uid), Catch::Contains("scaled up for uid-trainer"));
  }
  SECTION("pods that left the intent (bound or gone), or are not held for, hold nothing") {
    Intent intent = P4dIntentFor({{"uid-trainer", 8}});
    intent.pod_uids.clear();
    CHECK_FALSE(held(CapacityHolds({intent}, {PendingPod("trainer", 8)}, nodes), "uid-web", 1, fresh));
    Intent by_count = P4dIntentFor({});
    by_count.pod_uids = {"uid-trainer"};  // CA packed it, but it requires no topology
    CHECK_FALSE(held(CapacityHolds({by_count}, {PendingPod("trainer", 8)}, nodes), "uid-web", 1, fresh));
  }
  SECTION("two scale-ups of one group are one pool: its pods packed over both nodes, either pod takes either") {
    const CapacityHolds two({P4dIntentFor({{"uid-a", 4}}), P4dIntentFor({{"uid-b", 2}})},
                            {PendingPod("a", 4), PendingPod("b", 2)}, nodes);
    // 4 + 2 first-fit decreasing: both on new (6 held), none on newer.
    CHECK(two.HeldOn(fresh) == 6);
    CHECK(two.HeldOn(newer) == 0);
    CHECK_FALSE(held(two, "uid-web", 2, fresh));
    CHECK(held(two, "uid-web", 3, fresh));
    CHECK_FALSE(held(two, "uid-web", 8, newer));  // a hold for the pool's pods, not one node per scale-up
    CHECK_FALSE(held(two, "uid-a", 4, fresh));
    CHECK_FALSE(held(two, "uid-b", 2, newer));    // b's scale-up's node or a's: alike
    const NodeVerdict verdict = JudgeNode(*DemandOf(MakePod().gpus(3)), {"uid-web"}, fresh, two, memo);
    CHECK(JudgedReasonText(verdict, {"uid-web"}, fresh, two) ==
          "topofit: 6 of the node's 8 free GPUs are held for the pods a scale-up brought it for "
          "(node group p4d-group scaled up for ml/a, ml/b)");
  }
  SECTION("a pod first in the queue takes the node a later scale-up's pod was waiting for, if the pool still fits") {
    // x's scale-up brought new; y's node is still to come. Whichever of the two comes first takes new.
    const std::vector<const NodeGpuSnapshot*> one_up = {&fresh};
    Intent for_x = P4dIntentFor({{"uid-x", 8}});
    Intent for_y = P4dIntentFor({{"uid-y", 8}});
    const CapacityHolds pool({for_x, for_y}, {PendingPod("x", 8), PendingPod("y", 8)}, one_up);
    CHECK_FALSE(held(pool, "uid-x", 8, fresh));
    CHECK_FALSE(held(pool, "uid-y", 8, fresh));
    CHECK(held(pool, "uid-web", 1, fresh));
    // A pod of the pool that would leave another unplaced is held: a 1-GPU pod CA packed with an 8-GPU
    // one onto two nodes waits for the second rather than split the first.
    Intent packed = P4dIntentFor({{"uid-x", 8}, {"uid-one", 1}});
    packed.node_count = 2;
    const CapacityHolds mixed({packed}, {PendingPod("x", 8), PendingPod("one", 1)}, one_up);
    CHECK(held(mixed, "uid-one", 1, fresh));
    CHECK_FALSE(held(mixed, "uid-x", 8, fresh));
  }
  SECTION("a two-node scale-up holds both nodes, each for at most its own GPUs") {
    Intent big = P4dIntentFor({{"uid-x", 8}, {"uid-y", 8}});
    big.node_count = 2;
    const CapacityHolds both({big}, {PendingPod("x", 8), PendingPod("y", 8)}, nodes);
    CHECK(held(both, "uid-web", 1, fresh));
    CHECK(held(both, "uid-web", 1, newer));
    const NodeVerdict verdict = JudgeNode(*DemandOf(MakePod().gpus(1)), {"uid-web"}, newer, both, memo);
    CHECK(verdict.held_gpus == 8);  // 16 pending, but one node serves at most 8 of them
    CHECK_FALSE(held(both, "uid-x", 8, newer));
  }
  SECTION("a two-node scale-up holds on each node what its pods would take of it, not the whole demand") {
    // 4 + 4 + 2 GPUs over two nodes, first-fit decreasing: new takes 4 + 4 (full), newer takes 2.
    Intent three = P4dIntentFor({{"uid-x", 4}, {"uid-y", 4}, {"uid-z", 2}});
    three.node_count = 2;
    const CapacityHolds split({three}, {PendingPod("x", 4), PendingPod("y", 4), PendingPod("z", 2)}, nodes);
    CHECK(held(split, "uid-web", 1, fresh));
    CHECK(JudgeNode(*DemandOf(MakePod().gpus(1)), {"uid-web"}, newer, split, memo).fits);  // 8 - 1 >= 2
    CHECK_FALSE(held(split, "uid-web", 6, newer));  // a hold for a 2-GPU pod leaves the other 6
    CHECK(held(split, "uid-web", 7, newer));
  }
  SECTION("a node the pod does not fit is refused by the filter, whatever the holds") {
    const NodeVerdict too_big = JudgeNode(*DemandOf(MakePod().gpus(16)), {"uid-web"}, fresh, holds, memo);
    CHECK(too_big.refusal == Refusal::kNodeSize);
  }
}

// A hold keeps a pod off new capacity only while the pod is not late (JudgedPod): pending for two expected
// boots (10 minutes by default), whatever capacity CA counted it onto has not come.
TEST_CASE("A pod pending two expected boots is no longer held off capacity grown for another", "[capacity_hold]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  REQUIRE(state->UpsertNode(P4d("new", kIntentSeconds + 300)).ok());
  const NodeGpuSnapshot& fresh = *state->Snapshot("new");
  const absl::Time now = absl::FromUnixSeconds(kIntentSeconds + 360);
  const CapacityHolds holds({P4dIntentFor({{"uid-trainer", 8}})}, {PendingPod("trainer", 8)}, {&fresh},
                            HoldContext{now, CapacityWaitPolicy{}});
  const GpuDemand one_gpu = *DemandOf(MakePod().gpus(1));
  FilterMemo memo;
  auto refusal = [&](const JudgedPod& pod, const CapacityHolds& h) { return JudgeNode(one_gpu, pod, fresh, h, memo).refusal; };

  CHECK(refusal({"uid-web", now - absl::Minutes(10) - absl::Seconds(1)}, holds) == Refusal::kNone);
  CHECK(refusal({"uid-web", now - absl::Minutes(10)}, holds) == Refusal::kHeldForScaleUp);  // not yet late
  CHECK(refusal({"uid-web"}, holds) == Refusal::kHeldForScaleUp);  // created when, unknown
  // The verdict says until when the pod is held back, when its creation time is known, and so does the reason.
  const JudgedPod eight_minutes("uid-web", now - absl::Minutes(8));
  const NodeVerdict held_eight = JudgeNode(one_gpu, eight_minutes, fresh, holds, memo);
  CHECK(held_eight.held_until == now + absl::Minutes(2));
  CHECK(JudgedReasonText(held_eight, eight_minutes, fresh, holds) ==
        "topofit: 8 of the node's 8 free GPUs are held for the pods a scale-up brought it for; this pod is held back until "
        "2027-01-15T08:08:00+00:00, when it has been pending 10m (node group p4d-group scaled up for ml/trainer)");
  const NodeVerdict held_unknown = JudgeNode(one_gpu, {"uid-web"}, fresh, holds, memo);
  CHECK_FALSE(held_unknown.held_until.has_value());
  CHECK_THAT(JudgedReasonText(held_unknown, {"uid-web"}, fresh, holds), !Catch::Contains("held back until"));
  // A pod of the pool waits for the pool's own nodes, late or not: CA packed it with the trainer onto two
  // nodes, and the second is still to come.
  Intent packed = P4dIntentFor({{"uid-trainer", 8}, {"uid-one", 1}});
  packed.node_count = 2;
  const CapacityHolds pool({packed}, {PendingPod("trainer", 8), PendingPod("one", 1)}, {&fresh},
                           HoldContext{now, CapacityWaitPolicy{}});
  const JudgedPod member("uid-one", now - absl::Minutes(15));
  const NodeVerdict member_held = JudgeNode(one_gpu, member, fresh, pool, memo);
  CHECK(member_held.refusal == Refusal::kHeldForScaleUp);
  CHECK_FALSE(member_held.held_until.has_value());
  CHECK_THAT(JudgedReasonText(member_held, member, fresh, pool), !Catch::Contains("held back until"));
  // The expected boot the operator gives sets the bound.
  const CapacityHolds slow_boots({P4dIntentFor({{"uid-trainer", 8}})}, {PendingPod("trainer", 8)}, {&fresh},
                                 HoldContext{now, CapacityWaitPolicy{.expected_boot = absl::Minutes(8)}});
  CHECK(refusal({"uid-web", now - absl::Minutes(11)}, slow_boots) == Refusal::kHeldForScaleUp);
  CHECK(refusal({"uid-web", now - absl::Minutes(17)}, slow_boots) == Refusal::kNone);
  // Without a time (HoldContext's default) nobody is late.
  const CapacityHolds timeless({P4dIntentFor({{"uid-trainer", 8}})}, {PendingPod("trainer", 8)}, {&fresh});
  CHECK(refusal({"uid-web", now - absl::Hours(1)}, timeless) == Refusal::kHeldForScaleUp);

  // The creation time is read from the pod's metadata; 0 (unset) is unknown.
  const kube::Pod created = MakePod().uid("uid-web").created(kIntentSeconds);
  const JudgedPod judged = JudgedPod::Of(created);  // a view of the pod's uid: the pod outlives it
  CHECK(judged.uid == "uid-web");
  CHECK(judged.created == absl::FromUnixSeconds(kIntentSeconds));
  const kube::Pod unset = MakePod().uid("uid-web");
  CHECK_FALSE(JudgedPod::Of(unset).created.has_value());
}

// Wait or place now (capacity_wait.h): a pod preferring NVLink, for which a p4d node is booting, is
// refused a PCIe node until the bound; the node grown for it is never refused to it.
TEST_CASE("A pod preferring a topology waits for the capacity scaled up for it rather than run slower now",
          "[capacity_hold][capacity_wait]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  REQUIRE(state->UpsertNode(kube::testing::MakeNode().name("g5-old").label("node.kubernetes.io/instance-type", "g5.48xlarge")
                                .gpus(8).created(kIntentSeconds - 3600)).ok());
  const NodeGpuSnapshot& pcie = *state->Snapshot("g5-old");
  const kube::Pod trainer = MakePod().name("trainer").gpus(4).annotation("topofit.io/min-link", "NV");
  const GpuDemand demand = *DemandOf(trainer);
  const Intent intent = P4dIntentFor({{"uid-trainer", 4}});  // its p4d node is still booting
  FilterMemo memo;
  auto at = [&](absl::Duration since, const std::vector<const NodeGpuSnapshot*>& nodes) {
    return CapacityHolds({intent}, {PendingPod("trainer", 4)}, nodes,
                         HoldContext{absl::FromUnixSeconds(kIntentSeconds) + since, CapacityWaitPolicy{}});
  };

  const CapacityHolds booting = at(absl::Minutes(2), {&pcie});
  const NodeVerdict waiting = JudgeNode(demand, {"uid-trainer"}, pcie, booting, memo);
  REQUIRE(waiting.refusal == Refusal::kWaitingForCapacity);
  CHECK_FALSE(waiting.fits);
  CHECK(waiting.unresolvable);  // preemption would not bring the NVLink node sooner
  CHECK(JudgedReasonText(waiting, {"uid-trainer"}, pcie, booting) ==
        "topofit: the node gives a poorer set than the capacity scaled up for the pod, which it waits for (here at best "
        "PHB; node group p4d-group was scaled up for it 2m ago); it takes this node if they are not up 10m after the "
        "scale-up");
  // Others are not held off the PCIe node: nothing was grown there for the trainer.
  CHECK(JudgeNode(*DemandOf(MakePod().gpus(4).annotation("topofit.io/min-link", "NV")), {"uid-other"}, pcie, booting,
                  memo).fits);
  // Past the bound the capacity is late: the trainer takes what there is.
  CHECK(JudgeNode(demand, {"uid-trainer"}, pcie, at(absl::Minutes(10), {&pcie}), memo).fits);
  // Without a time (HoldContext's default) nobody waits.
  CHECK(JudgeNode(demand, {"uid-trainer"}, pcie, CapacityHolds({intent}, {}, {&pcie}), memo).fits);

  // The p4d node is up: it is the trainer's, and the PCIe node is still refused while it has it.
  REQUIRE(state->UpsertNode(P4d("p4d-new", kIntentSeconds + 240)).ok());
  const NodeGpuSnapshot& nvswitch = *state->Snapshot("p4d-new");
  const CapacityHolds up = at(absl::Minutes(5), {&pcie, &nvswitch});
  CHECK(JudgeNode(demand, {"uid-trainer"}, nvswitch, up, memo).fits);
  CHECK(JudgeNode(demand, {"uid-trainer"}, pcie, up, memo).refusal == Refusal::kWaitingForCapacity);
}

}  // namespace
}  // namespace topofit::decision
