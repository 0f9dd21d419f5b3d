#include "decision/capacity_ask.h"

#include <catch2/catch.hpp>

#include "codec/node_topology.h"
#include "decision/capacity_hold.h"
#include "decision/pod_filter.h"
#include "decision/slowdown.h"
#include "scheduler/gpu_state.h"
#include "tests/decision/p4d_scale_up.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;
using scheduler::GpuState;
using scheduler::NewInMemoryGpuState;
using testing::kIntentSeconds;
using testing::P4d;
using testing::P4dIntentFor;

const absl::Time kNow = absl::FromUnixSeconds(kIntentSeconds);

kube::Pod TrainerPod(const char* runtime) {
  kube::testing::PodBuilder pod = MakePod().name("trainer").gpus(4).annotation("topofit.io/min-link", "NV");
  if (runtime != nullptr) pod.annotation("topofit.io/expected-runtime", runtime);
  return pod;
}

GpuDemand Trainer(const char* runtime) { return *DemandOf(TrainerPod(runtime)); }

// Shapes from these nodes alone: no group template.
ClusterShapes ShapesOf(std::vector<const NodeGpuSnapshot*> nodes) {
  ClusterShapes shapes;
  shapes.nodes = std::move(nodes);
  return shapes;
}

// A cluster with a busy p4d node (NVSwitch: what new capacity of its shape gives) and an idle g5 (PCIe).
struct Cluster {
  Cluster() {
    REQUIRE(state->UpsertNode(MakeNode().name("g5").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)
                                  .created(kIntentSeconds - 3600)).ok());
    REQUIRE(state->UpsertNode(P4d("p4d", kIntentSeconds - 3600)).ok());
    REQUIRE(state->Assume(scheduler::PodRef{"uid-busy", "ml", "busy"}, "p4d", topology::GpuSet::FirstN(8)).ok());
    g5 = state->Snapshot("g5");
    p4d = state->Snapshot("p4d");
  }
  std::vector<const NodeGpuSnapshot*> Nodes() const { return {g5.get(), p4d.get()}; }
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  std::shared_ptr<const NodeGpuSnapshot> g5, p4d;
};

TEST_CASE("Only a pod that prefers a topology and says its run time may ask, and only for a shape the cluster has",
          "[capacity_ask]") {
  Cluster cluster;
  std::optional<CapacityAsk> ask = CapacityAskFor(TrainerPod("10h"), Trainer("10h"), ShapesOf(cluster.Nodes()), kNow, {}, {});
  REQUIRE(ask.has_value());
  CHECK(ask->first_refused == kNow);  // not refused before: from now
  CHECK(ask->obtainable_from == "node p4d");
  // What an empty p4d gives 4 GPUs, and more than the g5's best set.
  CHECK(ask->obtainable_mbps == cluster.state->Snapshot("p4d")->topology->quality().BestBandwidth(4));
  CHECK(ask->obtainable_mbps > cluster.state->Snapshot("g5")->topology->quality().BestBandwidth(4));
  Preference refused;
  refused.first_seen = kNow - absl::Minutes(3);
  CHECK(CapacityAskFor(TrainerPod("10h"), Trainer("10h"), ShapesOf(cluster.Nodes()), kNow, {refused}, {})->first_refused == refused.first_seen);

  CHECK_FALSE(MayAskForCapacity(Trainer(nullptr)));
  CHECK_FALSE(CapacityAskFor(TrainerPod(nullptr), Trainer(nullptr), ShapesOf(cluster.Nodes()), kNow, {}, {}).has_value());
  // No shape of the cluster gives NVLink: no capacity could.
  CHECK_FALSE(CapacityAskFor(TrainerPod("10h"), Trainer("10h"), ShapesOf({cluster.g5.get(), cluster.g5.get()}), kNow, {}, {}).has_value());
  CHECK_FALSE(MayAskForCapacity(*DemandOf(MakePod().gpus(4).annotation("topofit.io/min-link", "NV")
                                              .annotation("topofit.io/topology-policy", "required")
                                              .annotation("topofit.io/expected-runtime", "10h"))));
}

TEST_CASE("A node group at size zero counts through its template, if the pod may run there", "[capacity_ask]") {
  Cluster cluster;
  codec::TopologyResolver topologies;
  const std::vector<const NodeGpuSnapshot*> g5_only = {cluster.g5.get()};
  // No node gives NVLink: the p4d group has no node yet, only the template CA offered the expander.
  CHECK_FALSE(CapacityAskFor(TrainerPod("10h"), Trainer("10h"), ShapesOf(g5_only), kNow, {}, {}).has_value());
  const ClusterShapes with_p4d{g5_only, kube::SharedTemplates({{"p4d-group", P4d("template-p4d", 0)}}), &topologies};
  std::optional<CapacityAsk> ask = CapacityAskFor(TrainerPod("10h"), Trainer("10h"), with_p4d, kNow, {}, {});
  REQUIRE(ask.has_value());
  CHECK(ask->obtainable_mbps == cluster.p4d->topology->quality().BestBandwidth(4));
  CHECK(ask->obtainable_from == "node group p4d-group");  // what the refusal names

  // A group the pod may not run on gives it nothing: its template's taint, or the pod's node selector.
  kube::Node tainted = P4d("template-p4d", 0);
  tainted.spec.taints.push_back({"dedicated", "inference", kube::TaintEffect::kNoSchedule});
  CHECK_FALSE(CapacityAskFor(TrainerPod("10h"), Trainer("10h"), {g5_only, kube::SharedTemplates({{"p4d-group", tainted}}), &topologies},
                             kNow, {}, {}).has_value());
  kube::Pod pinned = TrainerPod("10h");
  pinned.spec.node_selector["pool"] = "training";
  CHECK_FALSE(CapacityAskFor(pinned, *DemandOf(pinned), with_p4d, kNow, {}, {}).has_value());

  // What the expander keeps of a call's templates: the groups with GPUs.
  const std::map<std::string, kube::Node> offered = {{"p4d-group", P4d("template-p4d", 0)},
                                                     {"cpu-group", MakeNode().name("template-cpu")}};
  const std::map<std::string, kube::Node> kept = GpuGroupTemplates(kube::SharedTemplates(offered));
  REQUIRE(kept.size() == 1);
  CHECK(kept.count("p4d-group") == 1);
  // CA names a template anew on every call: offered again as it was, it is the same template.
  const auto named = [](const std::string& name) {
    kube::Node node = P4d(name, 0);
    node.metadata.labels["kubernetes.io/hostname"] = name;
    return GpuGroupTemplates(kube::SharedTemplates({{"p4d-group", node}})).at("p4d-group");
  };
  CHECK(named("template-node-for-p4d-group-5577006791947779410") ==
        named("template-node-for-p4d-group-8674665223082153551"));
  CHECK(named("a").metadata.labels.at("node.kubernetes.io/instance-type") == "p4d.24xlarge");
  CHECK(named("a").status.allocatable == P4d("a", 0).status.allocatable);
}

TEST_CASE("A 10-hour trainer preferring NVLink refuses an idle g5 and asks for capacity, a 1-minute one takes it",
          "[capacity_ask][capacity_hold]") {
  Cluster cluster;
  const NodeGpuSnapshot& g5 = *cluster.state->Snapshot("g5");
  FilterMemo memo;
  const CapacityHolds none;
  const std::optional<CapacityAsk> ask = CapacityAskFor(TrainerPod("10h"), Trainer("10h"), ShapesOf(cluster.Nodes()), kNow, {}, {});
  REQUIRE(ask.has_value());

  const NodeVerdict asking = JudgeNode(Trainer("10h"), {"uid-trainer"}, g5, none, memo, &*ask);
  REQUIRE(asking.refusal == Refusal::kAskingForCapacity);
  CHECK_FALSE(asking.fits);
  CHECK(asking.unresolvable);  // preemption would not give it a better set
  CHECK(RefusalCode(asking.refusal) == "asking-for-capacity");
  CHECK(JudgedReasonText(asking, {"uid-trainer"}, g5, none, &*ask) ==
        "topofit: the node gives a poorer set than capacity the pod asked for, which it waits for (here at best PHB, " +
            topology::FormatBandwidth(asking.chosen->quality.bandwidth_mbps) + "; a new node " +
            topology::FormatBandwidth(ask->obtainable_mbps) + ", as node p4d gives); it takes this node if none is up "
            "10m after it "
            "was first refused");
  // Without an ask (bind, or a pod that could not ask) the node fits as before.
  CHECK(JudgeNode(Trainer("10h"), {"uid-trainer"}, g5, none, memo).fits);

  // On the g5's set the trainer runs between 3.5 and 6 times as long: 2 minutes of work would lose more
  // than the 5-minute boot (it asks), 1 minute loses less (it takes the g5).
  const double stretch = Stretch(ask->obtainable_mbps, asking.chosen->quality.bandwidth_mbps,
                                 AssumedCommFraction(Trainer("10h")));
  CHECK(stretch > 3.5);
  CHECK(stretch < 6);
  const std::optional<CapacityAsk> two_minutes = CapacityAskFor(TrainerPod("2m"), Trainer("2m"), ShapesOf(cluster.Nodes()), kNow, {}, {});
  REQUIRE(two_minutes.has_value());
  CHECK(JudgeNode(Trainer("2m"), {"uid-trainer"}, g5, none, memo, &*two_minutes).refusal == Refusal::kAskingForCapacity);
  const std::optional<CapacityAsk> short_ask = CapacityAskFor(TrainerPod("1m"), Trainer("1m"), ShapesOf(cluster.Nodes()), kNow, {}, {});
  REQUIRE(short_ask.has_value());
  CHECK(JudgeNode(Trainer("1m"), {"uid-trainer"}, g5, none, memo, &*short_ask).fits);

  // 10 minutes after its first refusal nothing came: it takes the g5.
  Preference refused;
  refused.first_seen = kNow - absl::Minutes(10);
  const std::optional<CapacityAsk> late = CapacityAskFor(TrainerPod("10h"), Trainer("10h"), ShapesOf(cluster.Nodes()), kNow, {refused}, {});
  CHECK(JudgeNode(Trainer("10h"), {"uid-trainer"}, g5, none, memo, &*late).fits);

  // Once a scale-up holds capacity for it, waiting for that capacity is the rule (capacity_wait.h), not
  // asking again: a hold for it means it does not ask.
  const CapacityHolds held({P4dIntentFor({{"uid-trainer", 4}})}, {}, {&g5}, HoldContext{});
  CHECK(JudgeNode(Trainer("10h"), {"uid-trainer"}, g5, held, memo, &*ask).fits);
}

}  // namespace
}  // namespace topofit::decision
