#include <future>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/kube/builders.h"
#include "tests/scheduler/extender_fixture.h"

namespace topofit::scheduler {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;

kube::Node P4d(const std::string& name) {
  return MakeNode().name(name).label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8);
}

// kube-scheduler retries a bind that outlived its httpTimeout while the first is still running. Before,
// both claims "succeeded" (the second taken as a repeat), the API server refused the second with 409,
// and that path forgot the pod: the GPUs of the pod the API server did bind were free again, and the
// next 8-GPU pod was bound to them too. Now binds of one pod run one at a time and a repeat never
// releases what an earlier bind claimed.
TEST_CASE("Two binds of one pod at once never free the GPUs the bound pod holds", "[extender][bind]") {
  for (int trial = 0; trial < 10; ++trial) {
    testing::ExtenderFixture f;
    REQUIRE(f.state->UpsertNode(P4d("p4d-1")).ok());
    const kube::Pod trainer = MakePod().name("trainer").uid("uid-trainer").gpus(8);
    f.kube.PutPod(trainer);
    REQUIRE(f.extender.Filter({trainer, std::nullopt, std::vector<std::string>{"p4d-1"}})->node_names->size() == 1);
    f.kube.SlowBindsBy(absl::Milliseconds(20));

    const codec::ExtenderBindingArgs args{"trainer", "default", "uid-trainer", "p4d-1"};
    auto first = std::async(std::launch::async, [&] { return *f.extender.Bind(args); });
    auto retry = std::async(std::launch::async, [&] { return *f.extender.Bind(args); });
    INFO("trial " << trial);
    // The retry finds the pod bound where the first put it: both report success.
    CHECK(first.get() == "");
    CHECK(retry.get() == "");
    CHECK(f.state->Snapshot("p4d-1")->free().empty());
    REQUIRE(f.state->AssignmentOf("uid-trainer"));
    CHECK(f.state->AssignmentOf("uid-trainer")->second.size() == 8);

    // The next 8-GPU pod is refused on the full node, by filter and by bind.
    const kube::Pod next = MakePod().name("next").uid("uid-next").gpus(8);
    f.kube.PutPod(next);
    CHECK(f.extender.Filter({next, std::nullopt, std::vector<std::string>{"p4d-1"}})->node_names->empty());
    CHECK_THAT(*f.extender.Bind({"next", "default", "uid-next", "p4d-1"}), Catch::Contains("needs 8 GPUs, 0 free"));
  }
}

TEST_CASE("A bind that fails releases only what it claimed", "[extender][bind]") {
  testing::ExtenderFixture f;
  REQUIRE(f.state->UpsertNode(P4d("p4d-1")).ok());
  REQUIRE(f.state->UpsertNode(P4d("p4d-2")).ok());
  const kube::Pod trainer = MakePod().name("trainer").uid("uid-trainer").gpus(4);
  f.kube.PutPod(trainer);
  REQUIRE(f.extender.Filter({trainer, std::nullopt, std::vector<std::string>{"p4d-1", "p4d-2"}}).ok());
  REQUIRE(*f.extender.Bind({"trainer", "default", "uid-trainer", "p4d-1"}) == "");

  SECTION("a repeat the API server refuses for another reason keeps the earlier claim") {
    f.kube.FailBindsWith(absl::UnavailableError("the API server is restarting"));
    CHECK_THAT(*f.extender.Bind({"trainer", "default", "uid-trainer", "p4d-1"}), Catch::Contains("restarting"));
    CHECK(f.state->Snapshot("p4d-1")->free().size() == 4);
  }
  SECTION("a bind of the pod to another node is refused and changes nothing") {
    CHECK_THAT(*f.extender.Bind({"trainer", "default", "uid-trainer", "p4d-2"}),
               Catch::Contains("holds GPUs 0,1,2,3 on node p4d-1"));
    CHECK(f.state->Snapshot("p4d-1")->free().size() == 4);
    CHECK(f.state->Snapshot("p4d-2")->free().size() == 8);
  }
  SECTION("a first bind the API server refuses releases its claim") {
    const kube::Pod other = MakePod().name("other").uid("uid-other").gpus(4);
    f.kube.PutPod(other);
    REQUIRE(f.extender.Filter({other, std::nullopt, std::vector<std::string>{"p4d-2"}}).ok());
    f.kube.FailBindsWith(absl::UnavailableError("the API server is restarting"));
    CHECK(*f.extender.Bind({"other", "default", "uid-other", "p4d-2"}) != "");
    CHECK(f.state->Snapshot("p4d-2")->free().size() == 8);
    CHECK(f.state->Snapshot("p4d-1")->free().size() == 4);  // the trainer's claim is untouched
  }
}

}  // namespace
}  // namespace topofit::scheduler
