#include <catch2/catch.hpp>

#include "decision/intent.h"
#include "decision/preference.h"
#include "tests/decision/p4d_scale_up.h"
#include "tests/kube/builders.h"
#include "tests/scheduler/extender_fixture.h"

namespace topofit::scheduler {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;
using decision::testing::kIntentSeconds;
using decision::testing::P4d;
using decision::testing::P4dIntentFor;

// The extender's verbs honour the holds: filter refuses the node to others (unresolvable: preemption
// cannot help), bind does too, and the hold ends when the pod it was for binds.
TEST_CASE("The extender holds new capacity for the pod the expander scaled up for", "[capacity_hold][extender]") {
  testing::ExtenderFixture f;
  f.clock.Set(absl::FromUnixSeconds(kIntentSeconds));
  auto& [clock, registry, state, ledger, kube, metrics, log, capacity, drain_guard, extender] = f;

  const kube::Pod trainer = MakePod().name("trainer").gpus(8).annotation("topofit.io/min-link", "NV")
                                .annotation("topofit.io/topology-policy", "required");
  const kube::Pod web = MakePod().name("web").gpus(1);
  kube.PutPod(trainer);
  kube.PutPod(web);
  // The trainer found no node; the expander chose p4d-group for it.
  codec::ExtenderArgs trainer_args{trainer, std::nullopt, std::vector<std::string>{}};
  REQUIRE(extender.Filter(trainer_args).ok());
  REQUIRE(ledger->Preferences().size() == 1);
  ledger->RecordIntent(P4dIntentFor({{"uid-trainer", 8}}));
  clock.Advance(absl::Minutes(5));
  REQUIRE(state->UpsertNode(P4d("p4d-new", kIntentSeconds + 240)).ok());

  codec::ExtenderArgs web_args{web, std::nullopt, std::vector<std::string>{"p4d-new"}};
  absl::StatusOr<codec::ExtenderFilterResult> for_web = extender.Filter(web_args);
  REQUIRE(for_web.ok());
  CHECK(for_web->node_names->empty());
  REQUIRE(for_web->failed_and_unresolvable_nodes.count("p4d-new") == 1);
  CHECK_THAT(for_web->failed_and_unresolvable_nodes.at("p4d-new"), Catch::Contains("scaled up for default/trainer"));
  CHECK(metrics.nodes_refused.Value({"held-for-scale-up"}) == 1);
  // The node fits the web pod once the trainer lands: no capacity of its own is asked for.
  CHECK(capacity.calls().empty());
  CHECK_THAT(*extender.Bind({"web", "default", "uid-web", "p4d-new"}),  // a bind that skipped filter too
             Catch::Contains("scaled up for default/trainer"));

  trainer_args.node_names = std::vector<std::string>{"p4d-new"};
  absl::StatusOr<codec::ExtenderFilterResult> for_trainer = extender.Filter(trainer_args);
  REQUIRE(for_trainer.ok());
  CHECK(*for_trainer->node_names == std::vector<std::string>{"p4d-new"});
  REQUIRE(*extender.Bind({"trainer", "default", "uid-trainer", "p4d-new"}) == "");

  // The trainer landed: the intent no longer holds anything, and the node's free GPUs are all taken.
  CHECK(ledger->Intents().empty());
  REQUIRE(state->UpsertNode(P4d("p4d-second", kIntentSeconds + 250)).ok());
  web_args.node_names = std::vector<std::string>{"p4d-second"};
  CHECK(*extender.Filter(web_args)->node_names == std::vector<std::string>{"p4d-second"});
}

// A pod pending for two expected boots (from its metadata.creationTimestamp; 10 minutes by default) is
// late: whatever CA counted it onto has not come, and filter and bind let it take GPUs held for another.
TEST_CASE("The extender lets a pod pending past two expected boots take capacity held for another",
          "[capacity_hold][extender]") {
  testing::ExtenderFixture f;
  f.clock.Set(absl::FromUnixSeconds(kIntentSeconds));
  auto& [clock, registry, state, ledger, kube, metrics, log, capacity, drain_guard, extender] = f;

  const kube::Pod trainer = MakePod().name("trainer").gpus(8).annotation("topofit.io/min-link", "NV")
                                .annotation("topofit.io/topology-policy", "required");
  const kube::Pod web = MakePod().name("web").gpus(1).created(kIntentSeconds - 360);
  kube.PutPod(trainer);
  kube.PutPod(web);
  REQUIRE(extender.Filter({trainer, std::nullopt, std::vector<std::string>{}}).ok());
  ledger->RecordIntent(P4dIntentFor({{"uid-trainer", 8}}));
  clock.Advance(absl::Minutes(4));  // the web pod has been pending 10 minutes
  REQUIRE(state->UpsertNode(P4d("p4d-new", kIntentSeconds + 240)).ok());

  const codec::ExtenderArgs web_args{web, std::nullopt, std::vector<std::string>{"p4d-new"}};
  absl::StatusOr<codec::ExtenderFilterResult> held = extender.Filter(web_args);
  REQUIRE(held->failed_and_unresolvable_nodes.count("p4d-new") == 1);
  CHECK_THAT(held->failed_and_unresolvable_nodes.at("p4d-new"),
             Catch::Contains("this pod is held back until 2027-01-15T08:04:00+00:00, when it has been pending 10m (node group "));
  CHECK_THAT(*extender.Bind({"web", "default", "uid-web", "p4d-new"}), Catch::Contains("scaled up for default/trainer"));
  clock.Advance(absl::Seconds(1));
  CHECK(*extender.Filter(web_args)->node_names == std::vector<std::string>{"p4d-new"});
  CHECK(*extender.Bind({"web", "default", "uid-web", "p4d-new"}) == "");
}

// Wait or place now (decision/capacity_wait.h): a pod preferring NVLink, with a p4d node booting for it,
// is refused the PCIe node a finished pod freed, asks for no capacity of its own, and takes the p4d node.
TEST_CASE("The extender keeps a pod preferring NVLink off a PCIe node while its NVLink node boots",
          "[capacity_wait][extender]") {
  testing::ExtenderFixture f;
  f.clock.Set(absl::FromUnixSeconds(kIntentSeconds));
  REQUIRE(f.state->UpsertNode(MakeNode().name("g5-1").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  const kube::Pod trainer = MakePod().name("trainer").gpus(4).annotation("topofit.io/min-link", "NV");
  f.kube.PutPod(trainer);
  f.ledger->RecordIntent(P4dIntentFor({{"uid-trainer", 4}}));

  codec::ExtenderArgs args{trainer, std::nullopt, std::vector<std::string>{"g5-1"}};
  absl::StatusOr<codec::ExtenderFilterResult> waiting = f.extender.Filter(args);
  REQUIRE(waiting.ok());
  CHECK(waiting->node_names->empty());
  REQUIRE(waiting->failed_and_unresolvable_nodes.count("g5-1") == 1);
  CHECK_THAT(waiting->failed_and_unresolvable_nodes.at("g5-1"), Catch::Contains("node group p4d-group was scaled up for it just now"));
  CHECK(f.metrics.nodes_refused.Value({"waiting-for-capacity"}) == 1);
  CHECK(f.capacity.calls().empty());  // its capacity is coming: none of its own

  REQUIRE(f.state->UpsertNode(P4d("p4d-new", kIntentSeconds + 240)).ok());
  args.node_names = std::vector<std::string>{"g5-1", "p4d-new"};
  CHECK(*f.extender.Filter(args)->node_names == std::vector<std::string>{"p4d-new"});

  SECTION("with --max-topology-wait 0 it takes the PCIe node at once") {
    f.extender.WaitForCapacity(decision::CapacityWaitPolicy{.max_wait = absl::ZeroDuration()});
    CHECK(*f.extender.Filter(args)->node_names == std::vector<std::string>{"g5-1", "p4d-new"});
  }
  SECTION("past the bound it takes what there is") {
    f.clock.Advance(absl::Minutes(10));  // the ledger stamped the intent when it was recorded
    CHECK(*f.extender.Filter(args)->node_names == std::vector<std::string>{"g5-1", "p4d-new"});
  }
}

// Wait for capacity still to be asked for (decision/capacity_ask.h): a trainer preferring NVLink that
// says it runs 10 hours, offered only an idle g5 while the cluster's p4d node is busy, is refused the g5,
// asks for capacity, and records a preference for an NVLink set (so the expander grows a group that gives
// one); 10 minutes after its first refusal it takes the g5.
TEST_CASE("The extender asks for NVLink capacity for a long trainer preferring NVLink instead of placing it on PCIe",
          "[capacity_ask][extender]") {
  testing::ExtenderFixture f;
  f.clock.Set(absl::FromUnixSeconds(kIntentSeconds));
  REQUIRE(f.state->UpsertNode(MakeNode().name("g5-1").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  REQUIRE(f.state->UpsertNode(P4d("p4d-busy", 0)).ok());
  REQUIRE(f.state->Assume({"uid-busy", "ml", "busy"}, "p4d-busy", topology::GpuSet::FirstN(8)).ok());
  const kube::Pod trainer = MakePod().name("trainer").gpus(4).annotation("topofit.io/min-link", "NV")
                                .annotation("topofit.io/expected-runtime", "10h");
  f.kube.PutPod(trainer);

  codec::ExtenderArgs args{trainer, std::nullopt, std::vector<std::string>{"g5-1"}};
  absl::StatusOr<codec::ExtenderFilterResult> asking = f.extender.Filter(args);
  REQUIRE(asking.ok());
  CHECK(asking->node_names->empty());
  REQUIRE(asking->failed_and_unresolvable_nodes.count("g5-1") == 1);
  CHECK_THAT(asking->failed_and_unresolvable_nodes.at("g5-1"),
             Catch::StartsWith("topofit: the node gives a poorer set than capacity the pod asked for"));
  CHECK(f.metrics.nodes_refused.Value({"asking-for-capacity"}) == 1);
  // Confined to the shape that gives its NVLink set: CA would book another g5 otherwise.
  CHECK(f.capacity.calls() == std::vector<std::string>{"request default/trainer refused=g5-1 shapes=p4d.24xlarge"});
  const std::vector<decision::Preference> preferences = f.ledger->Preferences();
  REQUIRE(preferences.size() == 1);
  CHECK(preferences[0].min_link == topology::LinkClass::kNvLink);  // the set it asked for, not only 4 GPUs

  f.clock.Advance(absl::Minutes(9));
  CHECK(f.extender.Filter(args)->node_names->empty());
  f.clock.Advance(absl::Minutes(1));  // 10 minutes after its first refusal
  CHECK(*f.extender.Filter(args)->node_names == std::vector<std::string>{"g5-1"});

  SECTION("a trainer that says nothing of its run time takes the g5 at once") {
    const kube::Pod silent = MakePod().name("silent").gpus(4).annotation("topofit.io/min-link", "NV");
    CHECK(*f.extender.Filter({silent, std::nullopt, std::vector<std::string>{"g5-1"}})->node_names ==
          std::vector<std::string>{"g5-1"});
  }
}

TEST_CASE("The extender asks for a node group at size zero that the expander learned of from CA",
          "[capacity_ask][extender]") {
  testing::ExtenderFixture f;
  f.clock.Set(absl::FromUnixSeconds(kIntentSeconds));
  REQUIRE(f.state->UpsertNode(MakeNode().name("g5-1").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  const kube::Pod trainer = MakePod().name("trainer").gpus(4).annotation("topofit.io/min-link", "NV")
                                .annotation("topofit.io/expected-runtime", "10h");
  f.kube.PutPod(trainer);
  const codec::ExtenderArgs args{trainer, std::nullopt, std::vector<std::string>{"g5-1"}};

  // No node of the cluster gives NVLink, and nothing says a group could: the g5 it is.
  CHECK(*f.extender.Filter(args)->node_names == std::vector<std::string>{"g5-1"});

  // The p4d group has no node; its template came with a BestOptions call (the expander records it).
  f.ledger->RecordNodeGroups({{"p4d-group", P4d("template-node-for-p4d-group", 0)}}, /*trusted=*/true);
  absl::StatusOr<codec::ExtenderFilterResult> asking = f.extender.Filter(args);
  REQUIRE(asking.ok());
  CHECK(asking->node_names->empty());
  REQUIRE(asking->failed_and_unresolvable_nodes.count("g5-1") == 1);
  CHECK_THAT(asking->failed_and_unresolvable_nodes.at("g5-1"),
             Catch::StartsWith("topofit: the node gives a poorer set than capacity the pod asked for"));
  CHECK_THAT(asking->failed_and_unresolvable_nodes.at("g5-1"), Catch::Contains("as node group p4d-group gives"));
  CHECK(f.capacity.calls() == std::vector<std::string>{"request default/trainer refused=g5-1 shapes=p4d.24xlarge"});
}

TEST_CASE("A pod refused by the nodes CA would count as fitting gets a capacity request, withdrawn at bind",
          "[capacity_requests][extender]") {
  testing::ExtenderFixture f;
  REQUIRE(f.state->UpsertNode(MakeNode().name("g5-1").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  const kube::Pod trainer = MakePod().name("trainer").gpus(8).annotation("topofit.io/min-link", "NV")
                                .annotation("topofit.io/topology-policy", "required");
  f.kube.PutPod(trainer);
  codec::ExtenderArgs args{trainer, std::nullopt, std::vector<std::string>{"g5-1"}};
  REQUIRE(f.extender.Filter(args)->failed_and_unresolvable_nodes.count("g5-1") == 1);
  REQUIRE(f.extender.Filter(args).ok());  // the provider de-duplicates; the extender asks each time
  CHECK(f.capacity.calls() == std::vector<std::string>{"request default/trainer refused=g5-1",
                                                       "request default/trainer refused=g5-1"});

  REQUIRE(f.state->UpsertNode(P4d("p4d-1", 0)).ok());
  args.node_names = std::vector<std::string>{"p4d-1"};
  REQUIRE(*f.extender.Filter(args)->node_names == std::vector<std::string>{"p4d-1"});
  REQUIRE(*f.extender.Bind({"trainer", "default", "uid-trainer", "p4d-1"}) == "");
  CHECK(f.capacity.calls().back() == "withdraw default/trainer");

  SECTION("no node offered: nothing refused, nothing CA would misjudge, no request") {
    const kube::Pod other = MakePod().name("other").gpus(8);
    REQUIRE(f.extender.Filter({other, std::nullopt, std::vector<std::string>{}}).ok());
    CHECK(f.capacity.calls().size() == 3);
  }
  SECTION("a pod consuming a request (asked before a restart) has it withdrawn at bind") {
    const kube::Pod resumed = MakePod().name("resumed").gpus(1)
                                  .annotation("autoscaling.x-k8s.io/consume-provisioning-request", "topofit-resumed");
    f.kube.PutPod(resumed);
    REQUIRE(f.extender.Filter({resumed, std::nullopt, std::vector<std::string>{"g5-1"}})->node_names->size() == 1);
    REQUIRE(*f.extender.Bind({"resumed", "default", "uid-resumed", "g5-1"}) == "");
    CHECK(f.capacity.calls().back() == "withdraw default/resumed");
  }
  SECTION("a pod that never asked binds without a withdrawal") {
    const kube::Pod small = MakePod().name("small").gpus(1);
    f.kube.PutPod(small);
    REQUIRE(f.extender.Filter({small, std::nullopt, std::vector<std::string>{"g5-1"}})->node_names->size() == 1);
    REQUIRE(*f.extender.Bind({"small", "default", "uid-small", "g5-1"}) == "");
    CHECK(f.capacity.calls().size() == 3);
  }
}

}  // namespace
}  // namespace topofit::scheduler
