#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "history/explain.h"
#include "tests/history/memory_recorder.h"
#include "tests/kube/builders.h"
#include "tests/scheduler/extender_fixture.h"
#include "tests/scheduler/fake_dra_view.h"

namespace topofit::scheduler {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;

// A GB200 compute tray (4 GPUs) of the NVLink clique `clique`.
kube::Node Tray(const std::string& name, const std::string& clique) {
  return MakeNode().name(name).label("nvidia.com/gpu.product", "NVIDIA-GB200").label("nvidia.com/gpu.clique", clique).gpus(4);
}

// Member `i` of a `size`-pod gang "train" of 4-GPU pods that must share one NVLink domain.
kube::Pod Member(int i, int size = 3) {
  return MakePod()
      .name(absl::StrCat("train-", i))
      .uid(absl::StrCat("uid-train-", i))
      .gpus(4)
      .annotation("topofit.io/gang", "train")
      .annotation("topofit.io/gang-size", std::to_string(size))
      .annotation("topofit.io/gang-required-topology", "domain");
}

// Two cliques: "small" of two trays, "big" of four; every tray offered.
struct GangCluster {
  GangCluster() {
    for (const char* name : {"small-0", "small-1"}) REQUIRE(f.state->UpsertNode(Tray(name, "uuid.small")).ok());
    for (const char* name : {"big-0", "big-1", "big-2", "big-3"}) REQUIRE(f.state->UpsertNode(Tray(name, "uuid.big")).ok());
  }
  codec::ExtenderFilterResult Filter(const kube::Pod& pod) { return f.FilterOn(pod, nodes); }
  std::string Bind(const kube::Pod& pod, const std::string& node) { return f.BindTo(pod, node); }
  testing::ExtenderFixture f;
  std::vector<std::string> nodes{"small-0", "small-1", "big-0", "big-1", "big-2", "big-3"};
};

TEST_CASE("A gang is reserved in one clique by its first member, steered there, and bound only whole",
          "[extender][gang]") {
  GangCluster c;
  // three 4-GPU members: the small clique holds two, so the whole gang goes to the big one
  const codec::ExtenderFilterResult first = c.Filter(Member(0));
  REQUIRE(first.node_names->size() == 1);
  CHECK(first.node_names->front() == "big-0");
  CHECK(first.failed_and_unresolvable_nodes.at("small-0") == "topofit: gang topofit:default/train: this member's place is on node big-0");
  CHECK(first.failed_nodes.empty());

  // the first member cannot bind before the others have their places
  CHECK(c.Bind(Member(0), "big-0") ==
        "topofit: gang topofit:default/train: 1 of 3 members have their place; none binds before all do "
        "(kube-scheduler retries the pod)");
  CHECK(c.f.state->Snapshot("big-0")->ours.empty());

  // a 4-GPU pod outside the gang finds the reserved trays taken, and the small clique free
  const kube::Pod other = MakePod().name("other").uid("uid-other").gpus(4);
  const codec::ExtenderFilterResult racing = c.Filter(other);
  CHECK(*racing.node_names == std::vector<std::string>{"small-0", "small-1", "big-3"});
  CHECK_THAT(racing.failed_nodes.at("big-1"), Catch::Contains("needs 4 GPUs, 0 free"));
  CHECK_THAT(c.Bind(other, "big-2"), Catch::Contains("needs 4 GPUs, 0 free"));

  CHECK(*c.Filter(Member(1)).node_names == std::vector<std::string>{"big-1"});
  CHECK(*c.Filter(Member(2)).node_names == std::vector<std::string>{"big-2"});
  // a member filtered again keeps its place
  CHECK(*c.Filter(Member(0)).node_names == std::vector<std::string>{"big-0"});
  // a member sent elsewhere is refused
  CHECK(c.Bind(Member(1), "big-3") == "topofit: gang topofit:default/train: the pod's place is on node big-1, not big-3");

  for (int i = 0; i < 3; ++i) CHECK(c.Bind(Member(i), absl::StrCat("big-", i)) == "");
  for (int i = 0; i < 3; ++i) CHECK(c.f.state->AssignmentOf(absl::StrCat("uid-train-", i))->second.size() == 4);
  CHECK(c.f.registry.Render().find("topofit_extender_gang_reservations_total{event=\"landed\"} 1") !=
        std::string::npos);
  // the gang landed: a fourth pod of it places as a single pod
  CHECK(c.Filter(Member(3)).node_names->size() == 3);
}

TEST_CASE("A gang no clique holds refuses every node as unresolvable and reserves nothing", "[extender][gang]") {
  GangCluster c;
  const codec::ExtenderFilterResult refused = c.Filter(Member(0, 5));
  CHECK(refused.node_names->empty());
  CHECK(refused.failed_and_unresolvable_nodes.size() == 6);
  CHECK(refused.failed_and_unresolvable_nodes.at("big-0") ==
        "topofit: gang topofit:default/train: no NVLink domain offered holds all 5 members of 4 GPUs (the most one "
        "holds is 4, in domain nvidia.com/gpu.clique=uuid.big)");
  // nothing held: a single pod still gets any tray
  CHECK(c.Filter(MakePod().name("single").uid("uid-single").gpus(4)).node_names->size() == 6);
}

TEST_CASE("Gang decisions reach the decision history: no room, the places reserved, a bind held", "[extender][gang]") {
  GangCluster c;
  history::testing::MemoryRecorder recorder;
  c.f.extender.RecordDecisionsTo(&recorder);
  c.Filter(Member(0, 5));
  REQUIRE(recorder.records().size() == 1);
  const history::Record no_room = recorder.records()[0];
  CHECK(no_room.kind == history::Kind::kGang);
  CHECK(no_room.reason == history::Reason::kGangNoRoom);
  CHECK(no_room.gang == "topofit:default/train");
  CHECK(no_room.correlation_id == "uid-train-0");
  CHECK(no_room.gpus == 20);
  CHECK(history::DescribeRecord(no_room, history::RecordClock::kWall) ==
        "gang topofit:default/train: no node or NVLink domain offered holds all 5 members (20 GPUs); they wait");
  // kube-scheduler's retries of the member are folded as its refusals are: counted on the next one kept
  c.Filter(Member(0, 5));
  c.Filter(Member(0, 5));
  REQUIRE(recorder.records().size() == 1);
  c.f.clock.Advance(absl::Minutes(1));
  c.Filter(Member(0, 5));
  REQUIRE(recorder.records().size() == 2);
  CHECK(recorder.records()[1].reason == history::Reason::kGangNoRoom);
  CHECK(recorder.records()[1].repeats == 2);

  c.Filter(Member(0));
  REQUIRE(recorder.records().size() == 3);
  const history::Record reserved = recorder.records()[2];
  CHECK(reserved.reason == history::Reason::kGangReserved);
  CHECK(reserved.gpus == 12);
  REQUIRE(reserved.candidates.size() == 3);
  CHECK(reserved.candidates[0].name == "big-0");
  CHECK(reserved.candidates[0].count == 1);
  CHECK(history::DescribeRecord(reserved, history::RecordClock::kWall) ==
        "gang topofit:default/train: every member's place reserved at once, 12 GPUs on big-0 (1), big-1 (1), "
        "big-2 (1)");

  CHECK_FALSE(c.Bind(Member(0), "big-0").empty());
  const std::vector<history::Record> records = recorder.records();
  const auto waiting = std::find_if(records.begin(), records.end(), [](const history::Record& r) {
    return r.reason == history::Reason::kGangWaiting;
  });
  REQUIRE(waiting != records.end());
  const history::Record held = *waiting;
  CHECK(held.node == "big-0");
  CHECK(history::DescribeRecord(held, history::RecordClock::kWall) ==
        "gang topofit:default/train: bind to big-0 held until every member has its place (1 of 3)");
}

TEST_CASE("A gang whose members do not all come frees its places at the bound, and none of it binds",
          "[extender][gang]") {
  GangCluster c;
  REQUIRE(c.Filter(Member(0)).node_names->size() == 1);
  REQUIRE(c.Filter(Member(1)).node_names->size() == 1);
  c.f.clock.Advance(absl::Minutes(2));
  // expired: the reservation is gone, the member's bind is refused, every tray is free again
  CHECK(c.Bind(Member(0), "big-0") ==
        "topofit: gang topofit:default/train: the pod has no reserved place (none was made, or it expired); its next "
        "filter reserves one");
  CHECK(c.Filter(MakePod().name("single").uid("uid-single").gpus(4)).node_names->size() == 6);
  CHECK(c.f.registry.Render().find("topofit_extender_gang_reservations_total{event=\"expired\"} 1") !=
        std::string::npos);
}

TEST_CASE("A deleted member's place opens for the pod that replaces it", "[extender][gang]") {
  GangCluster c;
  REQUIRE(*c.Filter(Member(0)).node_names == std::vector<std::string>{"big-0"});
  REQUIRE(*c.Filter(Member(1)).node_names == std::vector<std::string>{"big-1"});
  c.f.extender.PodDeleted("uid-train-0");
  const kube::Pod replacement = MakePod()
                                    .name("train-0b")
                                    .uid("uid-train-0b")
                                    .gpus(4)
                                    .annotation("topofit.io/gang", "train")
                                    .annotation("topofit.io/gang-size", "3")
                                    .annotation("topofit.io/gang-required-topology", "domain");
  CHECK(*c.Filter(replacement).node_names == std::vector<std::string>{"big-0"});
}

TEST_CASE("A gang member with a malformed size is an invalid pod", "[extender][gang]") {
  GangCluster c;
  const codec::ExtenderFilterResult result =
      c.Filter(MakePod().name("bad").uid("uid-bad").gpus(4).annotation("topofit.io/gang", "train").annotation(
          "topofit.io/gang-size", "zero"));
  CHECK_THAT(result.error, Catch::StartsWith("topofit: pod default/bad: ") && Catch::Contains("topofit.io/gang-size"));
}

// The gang below with its GPUs from claims (namespace ml, each member's own claim of 4 GPUs): cluster-
// autoscaler makes no claim for a pod it imagines, so the request names each member's own, a pod set each,
// and waits until as many members as it grows nodes for have been refused.
TEST_CASE("A gang of claim pods no clique holds asks once enough members have been refused, naming their claims",
          "[extender][gang][dra]") {
  GangCluster c;
  testing::FakeDraView dra;
  dra.gpus_per_node = 4;
  c.f.extender.JudgeClaimsWith(&dra);
  for (const char* tray : {"big-0", "big-1", "big-2", "big-3"}) {
    kube::Node node = Tray(tray, "uuid.big");
    node.metadata.labels["cloud.google.com/gke-nodepool"] = "big";
    REQUIRE(c.f.state->UpsertNode(node).ok());
  }
  kube::Node pool_template = Tray("template-node-for-big", "uuid.big");
  pool_template.metadata.labels["cloud.google.com/gke-nodepool"] = "big";
  pool_template.metadata.annotations["topofit.io/nodes-per-domain"] = "8";
  c.f.ledger->RecordNodeGroups({{"big", pool_template}}, /*trusted=*/true);
  const auto member = [&](int i) {
    kube::Pod pod = Member(i, 7);
    pod.metadata.namespace_name = "ml";
    pod.spec.containers.front().resources = {};
    const std::string claim = absl::StrCat("four-", i);
    pod.spec.resource_claims = {{.name = "gpus", .resource_claim_name = claim, .resource_claim_template_name = std::nullopt}};
    kube::ResourceClaim four;
    four.metadata.name = claim;
    four.metadata.namespace_name = "ml";
    four.requests = {{.name = "gpus", .device_class_name = "gpu.nvidia.com", .allocation_mode = "ExactCount",
                      .count = 4, .selectors = {}, .admin_access = false, .first_available = false,
                      .other_selector = false}};
    dra.claims[claim] = four;
    return pod;
  };
  CHECK_THAT(c.Filter(member(0)).failed_and_unresolvable_nodes.at("big-0"),
             Catch::EndsWith("; will ask cluster-autoscaler for 3 new nodes (3 members) in uuid.big of node group big "
                             "once 3 members have been refused (1 so far)"));
  CHECK_THAT(c.Filter(member(1)).failed_and_unresolvable_nodes.at("big-0"), Catch::EndsWith("(2 so far)"));
  CHECK(c.f.capacity.calls().empty());
  CHECK_THAT(c.Filter(member(2)).failed_and_unresolvable_nodes.at("big-0"),
             Catch::EndsWith("; asked cluster-autoscaler for 3 new nodes (3 members) in uuid.big of node group big"));
  c.Filter(member(3));  // consumes the request its claim is not named in
  CHECK(c.f.capacity.calls() ==
        std::vector<std::string>{
            "gang topofit:ml/train member=ml/train-2 count=3 domain=big/NVIDIA-GB200/uuid.big "
            "claim_members=ml/train-0,ml/train-1,ml/train-2",
            "gang topofit:ml/train member=ml/train-3 count=3 domain=big/NVIDIA-GB200/uuid.big "
            "claim_members=ml/train-0,ml/train-1,ml/train-2"});
}

TEST_CASE("A gang no clique holds asks once for a domain a node pool can grow, and a member's deletion withdraws it",
          "[extender][gang]") {
  GangCluster c;
  // 7 members: big holds 4, small 2; the big clique's pool can grow to 8 trays
  kube::Node pool_template = Tray("template-node-for-big", "uuid.big");
  pool_template.metadata.labels["cloud.google.com/gke-nodepool"] = "big";
  pool_template.metadata.annotations["topofit.io/nodes-per-domain"] = "8";
  SECTION("without a template that says how its domains grow, nothing is asked") {
    CHECK_THAT(c.Filter(Member(0, 7)).failed_and_unresolvable_nodes.at("big-0"),
               Catch::Contains("no NVLink domain") && !Catch::Contains("asked cluster-autoscaler"));
    CHECK(c.f.capacity.calls().empty());
  }
  SECTION("with one, the first member asks and every member consumes") {
    for (const char* tray : {"big-0", "big-1", "big-2", "big-3"}) {
      kube::Node node = Tray(tray, "uuid.big");
      node.metadata.labels["cloud.google.com/gke-nodepool"] = "big";
      REQUIRE(c.f.state->UpsertNode(node).ok());
    }
    c.f.ledger->RecordNodeGroups({{"big", pool_template}}, /*trusted=*/true);
    CHECK_THAT(c.Filter(Member(0, 7)).failed_and_unresolvable_nodes.at("big-0"),
               Catch::EndsWith("; asked cluster-autoscaler for 3 new nodes (3 members) in uuid.big of node group big"));
    c.Filter(Member(1, 7));
    CHECK(c.f.capacity.calls() ==
          std::vector<std::string>{
              "gang topofit:default/train member=default/train-0 count=3 domain=big/NVIDIA-GB200/uuid.big",
              "gang topofit:default/train member=default/train-1 count=3 domain=big/NVIDIA-GB200/uuid.big"});
    c.f.extender.PodDeleted("uid-train-1");
    CHECK(c.f.capacity.calls().back() == "withdraw gang topofit:default/train");
  }
  SECTION("a gang that must share one node asks for no domain") {
    c.f.ledger->RecordNodeGroups({{"big", pool_template}}, /*trusted=*/true);
    kube::Pod member = Member(0, 2);
    member.metadata.annotations["topofit.io/gang-required-topology"] = "node";
    c.Filter(member);
    CHECK(c.f.capacity.calls().empty());
  }
}

TEST_CASE("A Workload API gang's count is read from its PodGroup once, and a group that cannot be read places pod by pod for a while",
          "[extender][gang]") {
  GangCluster c;
  const auto member = [](int i) {
    return MakePod().name(absl::StrCat("w-", i)).uid(absl::StrCat("uid-w-", i)).gpus(4).schedulingGroup("train-workers")
        .annotation("topofit.io/gang-required-topology", "domain").build();
  };
  const auto reads = [&] {
    int n = 0;
    for (const auto& call : c.f.kube.calls()) n += call.verb == "get-workload-api" ? 1 : 0;
    return n;
  };
  SECTION("gang.minCount 3: reserved whole in the big clique") {
    c.f.kube.PutWorkloadApiObject("podgroups/default/train-workers",
                                  nlohmann::json::parse(R"({"spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}})"));
    CHECK(*c.Filter(member(0)).node_names == std::vector<std::string>{"big-0"});
    CHECK(*c.Filter(member(1)).node_names == std::vector<std::string>{"big-1"});
    CHECK_THAT(c.Bind(member(0), "big-0"), Catch::Contains("2 of 3 members have their place"));
    CHECK(reads() == 1);
  }
  SECTION("policy basic: not a gang") {
    c.f.kube.PutWorkloadApiObject("podgroups/default/train-workers",
                                  nlohmann::json::parse(R"({"spec": {"schedulingPolicy": {"basic": {}}}})"));
    CHECK(c.Filter(member(0)).node_names->size() == 6);
    CHECK(c.Filter(member(1)).node_names->size() == 6);
    CHECK(reads() == 1);
  }
  SECTION("no PodGroup: pod by pod, read again 30 seconds later, a gang once it is there") {
    CHECK(c.Filter(member(0)).node_names->size() == 6);
    CHECK(c.Filter(member(0)).node_names->size() == 6);
    CHECK(reads() == 1);
    c.f.kube.PutWorkloadApiObject("podgroups/default/train-workers",
                                  nlohmann::json::parse(R"({"spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}})"));
    c.f.clock.Advance(absl::Seconds(30));
    CHECK(*c.Filter(member(0)).node_names == std::vector<std::string>{"big-0"});
    CHECK(reads() == 2);
  }
}

}  // namespace
}  // namespace topofit::scheduler
