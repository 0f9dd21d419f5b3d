// The extender's filter and prioritize for pods whose GPUs come from ResourceClaims, over a DraView of two
// A100 nodes whose GPUs pair up under four PCIe roots (tests/scheduler/fake_dra_view.h).

#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "decision/prioritize.h"
#include "tests/decision/p4d_scale_up.h"
#include "tests/history/memory_recorder.h"
#include "tests/kube/builders.h"
#include "tests/scheduler/extender_fixture.h"
#include "tests/scheduler/fake_dra_view.h"

namespace topofit::scheduler {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;

using testing::FakeDraView;

// A pending claim asking `gpus` GPUs under one PCIe root.
kube::ResourceClaim GpusUnderOneRoot(const std::string& name, int64_t gpus) {
  kube::ResourceClaim claim;
  claim.metadata.name = name;
  claim.metadata.namespace_name = "ml";
  claim.requests = {{.name = "gpus", .device_class_name = "gpu.nvidia.com", .allocation_mode = "ExactCount",
                     .count = gpus, .selectors = {}, .admin_access = false, .first_available = false,
                     .other_selector = false}};
  claim.constraints = {{.requests = {}, .match_attribute = "resource.kubernetes.io/pcieRoot", .other = false}};
  return claim;
}

kube::Pod PodWithClaim(const std::string& claim) {
  kube::Pod pod = MakePod().name("trainer").namespaceName("ml");
  pod.spec.resource_claims = {{.name = "gpus", .resource_claim_name = claim, .resource_claim_template_name = std::nullopt}};
  return pod;
}

struct ClaimsFixture : testing::ExtenderFixture {
  ClaimsFixture() {
    for (const char* node : {"free", "scattered"}) {
      REQUIRE(state->UpsertNode(MakeNode().name(node).label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8)).ok());
    }
    // One GPU of each root taken on "scattered".
    REQUIRE(state->Assume(PodRef{"holder", "ml", "holder"}, "scattered", topology::GpuSet::FromMask(0b01010101)).ok());
    dra.claims["two"] = GpusUnderOneRoot("two", 2);
    extender.JudgeClaimsWith(&dra);
  }
  codec::ExtenderFilterResult Filter(const kube::Pod& pod) {
    absl::StatusOr<codec::ExtenderFilterResult> result =
        extender.Filter(codec::ExtenderArgs{pod, std::nullopt, std::vector<std::string>{"free", "scattered"}});
    REQUIRE(result.ok());
    return *std::move(result);
  }
  FakeDraView dra;
};

// A pod asking GPUs by a DeviceClass's own extended resource name (KEP-5004): kube-scheduler makes its claim.
kube::Pod ClassNamedPod(const std::string& device_class, int gpus) {
  return MakePod().name("server").namespaceName("ml").container(kube::testing::MakeContainer("main").limit(
      absl::StrCat("deviceclass.resource.kubernetes.io/", device_class), std::to_string(gpus)));
}

TEST_CASE("A pod asking a GPU class's own extended resource is judged as a claim of that many GPUs",
          "[extender][dra]") {
  ClaimsFixture f;
  const codec::ExtenderFilterResult result = f.Filter(ClassNamedPod("gpu.nvidia.com", 5));
  CHECK(result.error.empty());
  CHECK(*result.node_names == std::vector<std::string>{"free"});
  REQUIRE(result.failed_nodes.count("scattered") == 1);
  absl::StatusOr<std::vector<codec::HostPriority>> scores = f.extender.Prioritize(
      codec::ExtenderArgs{ClassNamedPod("gpu.nvidia.com", 5), std::nullopt, std::vector<std::string>{"free", "scattered"}});
  REQUIRE(scores.ok());
  std::map<std::string, int64_t> by_node;
  for (const codec::HostPriority& p : *scores) by_node[p.host] = p.score;
  CHECK(by_node.at("free") > by_node.at("scattered"));

  // A class the extender was not told asks for GPUs: the pod is no GPU pod to it, and passes everywhere.
  const codec::ExtenderFilterResult other = f.Filter(ClassNamedPod("nic.example.com", 5));
  CHECK(other.node_names->size() == 2);
}

TEST_CASE("A claim pod passes the node with two free GPUs under one root, not the scattered one", "[extender][dra]") {
  ClaimsFixture f;
  const codec::ExtenderFilterResult result = f.Filter(PodWithClaim("two"));
  CHECK(result.error.empty());
  CHECK(*result.node_names == std::vector<std::string>{"free"});
  REQUIRE(result.failed_nodes.count("scattered") == 1);
  CHECK_THAT(result.failed_nodes.at("scattered"), Catch::Contains("matchAttribute resource.kubernetes.io/pcieRoot"));

  absl::StatusOr<std::vector<codec::HostPriority>> scores =
      f.extender.Prioritize(codec::ExtenderArgs{PodWithClaim("two"), std::nullopt, std::vector<std::string>{"free", "scattered"}});
  REQUIRE(scores.ok());
  std::map<std::string, int64_t> by_node;
  for (const codec::HostPriority& p : *scores) by_node[p.host] = p.score;
  CHECK(by_node.at("free") > decision::kMinExtenderScore);
  CHECK(by_node.at("scattered") == decision::kMinExtenderScore);
}

TEST_CASE("A claim pod the extender cannot judge gets the filter's error, never a pass", "[extender][dra]") {
  ClaimsFixture f;
  SECTION("a claim not seen yet") {
    CHECK_THAT(f.Filter(PodWithClaim("missing")).error, Catch::Contains("ResourceClaim ml/missing is not known yet"));
  }
  SECTION("GPUs asked both through nvidia.com/gpu and a claim") {
    kube::Pod pod = MakePod().name("trainer").namespaceName("ml").gpus(1);
    pod.spec.resource_claims = PodWithClaim("two").spec.resource_claims;
    CHECK_THAT(f.Filter(pod).error, Catch::Contains("both through nvidia.com/gpu and through ResourceClaims"));
  }
  SECTION("a selector outside the subset") {
    f.dra.claims["two"].requests[0].selectors = {"device.attributes[\"gpu.nvidia.com\"].productName != \"T4\""};
    CHECK_THAT(f.Filter(PodWithClaim("two")).error, Catch::Contains("outside what topofit judges"));
  }
}

// A claim pod's filter cycle is recorded as a device-plugin pod's is, and a claim pod refused everywhere
// leaves its preference (its claims' GPUs, its own topology ask) for the expander and asks for capacity
// away from the nodes that refused it (the request names the shapes only where some would not do).
TEST_CASE("A claim pod's filter is in the decision history and a refused one leaves its preference",
          "[extender][dra][history]") {
  ClaimsFixture f;
  history::testing::MemoryRecorder recorder;
  f.extender.RecordDecisionsTo(&recorder);
  f.dra.claims["four"] = GpusUnderOneRoot("four", 4);  // no root has four GPUs
  kube::Pod pod = PodWithClaim("four");
  pod.metadata.uid = "uid-trainer";
  pod.metadata.annotations["topofit.io/min-link"] = "NV";
  pod.metadata.annotations["topofit.io/topology-policy"] = "required";
  const codec::ExtenderFilterResult refused = f.Filter(pod);
  CHECK(refused.node_names->empty());
  std::vector<history::Record> records = recorder.records();
  REQUIRE(records.size() == 3);
  CHECK(records[0].kind == history::Kind::kFilter);
  CHECK(records[0].reason == history::Reason::kNoNodeFits);
  CHECK(records[0].gpus == 4);
  CHECK(records[0].candidates.size() == 2);
  CHECK(records[1].kind == history::Kind::kPreference);
  CHECK(records[2].kind == history::Kind::kCapacityRequested);
  const std::vector<decision::Preference> preferences = f.ledger->Preferences();
  REQUIRE(preferences.size() == 1);
  CHECK(preferences[0].pod_uid == "uid-trainer");
  CHECK(preferences[0].gpus == 4);
  CHECK(preferences[0].min_link == topology::LinkClass::kNvLink);
  CHECK(f.capacity.calls() == std::vector<std::string>{"request ml/trainer refused=free,scattered"});

  kube::Pod fits = PodWithClaim("two");
  fits.metadata.uid = "uid-other";
  REQUIRE(f.Filter(fits).node_names->size() == 1);
  records = recorder.records();
  REQUIRE(records.size() == 4);
  CHECK(records[3].reason == history::Reason::kFits);
  CHECK(records[3].gpus == 2);
}

// The expander scaled p4d-group up for a trainer that requires NVLink: the new node is held for it, from a
// claim pod as from a device-plugin pod (unresolvable: preemption cannot free held GPUs).
TEST_CASE("Capacity grown for another pod is held from a claim pod", "[extender][dra][capacity_hold]") {
  ClaimsFixture f;
  f.clock.Set(absl::FromUnixSeconds(decision::testing::kIntentSeconds));
  const kube::Pod trainer = MakePod().name("trainer").gpus(8).annotation("topofit.io/min-link", "NV")
                                .annotation("topofit.io/topology-policy", "required");
  f.kube.PutPod(trainer);
  REQUIRE(f.extender.Filter({trainer, std::nullopt, std::vector<std::string>{}}).ok());
  f.ledger->RecordIntent(decision::testing::P4dIntentFor({{"uid-trainer", 8}}));
  f.clock.Advance(absl::Minutes(5));
  REQUIRE(f.state->UpsertNode(decision::testing::P4d("p4d-new", decision::testing::kIntentSeconds + 240)).ok());

  kube::Pod other = PodWithClaim("two");  // named as the claim fixtures name it: another uid than the trainer's
  other.metadata.name = "infer";
  other.metadata.uid = "uid-infer";
  absl::StatusOr<codec::ExtenderFilterResult> held =
      f.extender.Filter(codec::ExtenderArgs{other, std::nullopt, std::vector<std::string>{"p4d-new"}});
  REQUIRE(held.ok());
  CHECK(held->node_names->empty());
  REQUIRE(held->failed_and_unresolvable_nodes.count("p4d-new") == 1);
  CHECK_THAT(held->failed_and_unresolvable_nodes.at("p4d-new"), Catch::Contains("scaled up for default/trainer"));
  // Elsewhere it fits as before, and the trainer's own capacity is the trainer's to take.
  CHECK(*f.Filter(other).node_names == std::vector<std::string>{"free"});
}

// The expander scaled p4d-group up for a claim pod preferring NVLink: while its node boots, the pod keeps off
// a PCIe node it fits, as a device-plugin pod does (decision::HoldsAndAskOn), and takes its node once up.
TEST_CASE("A claim pod waits for the NVLink capacity grown for it rather than take a PCIe node",
          "[extender][dra][capacity_wait]") {
  ClaimsFixture f;
  f.clock.Set(absl::FromUnixSeconds(decision::testing::kIntentSeconds));
  REQUIRE(f.state->UpsertNode(MakeNode().name("g5-1").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  kube::ResourceClaim four = GpusUnderOneRoot("four", 4);
  four.constraints.clear();
  f.dra.claims["four"] = four;
  kube::Pod trainer = PodWithClaim("four");
  trainer.metadata.uid = "uid-trainer";
  trainer.metadata.annotations["topofit.io/min-link"] = "NV";
  f.kube.PutPod(trainer);
  f.ledger->RecordIntent(decision::testing::P4dIntentFor({{"uid-trainer", 4}}));

  const codec::ExtenderFilterResult waiting = f.FilterOn(trainer, {"g5-1"});
  CHECK(waiting.node_names->empty());
  REQUIRE(waiting.failed_and_unresolvable_nodes.count("g5-1") == 1);
  CHECK_THAT(waiting.failed_and_unresolvable_nodes.at("g5-1"), Catch::Contains("scaled up for it just now"));
  CHECK(f.metrics.nodes_refused.Value({"waiting-for-capacity"}) == 1);
  CHECK(f.capacity.calls().empty());  // its capacity is coming: none of its own

  REQUIRE(f.state->UpsertNode(decision::testing::P4d("p4d-new", decision::testing::kIntentSeconds + 240)).ok());
  CHECK(*f.FilterOn(trainer, {"g5-1", "p4d-new"}).node_names == std::vector<std::string>{"p4d-new"});
  f.clock.Advance(absl::Minutes(10));  // past the wait's bound it takes what there is
  CHECK(f.FilterOn(trainer, {"g5-1", "p4d-new"}).node_names->size() == 2);
}

// Member `i` of the 3-pod gang "train" (namespace ml) whose GPUs come from its claim `claim`.
kube::Pod ClaimMember(int i, const std::string& claim) {
  kube::Pod pod = MakePod()
                      .name(absl::StrCat("train-", i))
                      .namespaceName("ml")
                      .annotation("topofit.io/gang", "train")
                      .annotation("topofit.io/gang-size", "3");
  pod.spec.resource_claims = {{.name = "gpus", .resource_claim_name = claim, .resource_claim_template_name = std::nullopt}};
  return pod;
}

TEST_CASE("A gang of claim pods whose claims pick no particular GPUs is placed whole and binds only whole",
          "[extender][dra][gang]") {
  ClaimsFixture f;
  for (int i = 0; i < 3; ++i) {
    kube::ResourceClaim four = GpusUnderOneRoot(absl::StrCat("four-", i), 4);
    four.constraints.clear();
    f.dra.claims[four.metadata.name] = four;
  }
  const std::vector<std::string> nodes = {"free", "scattered"};
  // 3 x 4 GPUs: "free" holds two members, "scattered" (one GPU of each root taken) the third
  std::map<std::string, int> members_on;
  for (int i = 0; i < 3; ++i) {
    const codec::ExtenderFilterResult placed = f.FilterOn(ClaimMember(i, absl::StrCat("four-", i)), nodes);
    REQUIRE(placed.node_names->size() == 1);
    ++members_on[placed.node_names->front()];
    if (i == 0) {
      // no member binds before every member has its place
      CHECK(f.BindTo(ClaimMember(0, "four-0"), placed.node_names->front()) ==
            "topofit: gang topofit:ml/train: 1 of 3 members have their place; none binds before all do (kube-scheduler "
            "retries the pod)");
    }
  }
  CHECK(members_on == std::map<std::string, int>{{"free", 2}, {"scattered", 1}});
  // a 5-GPU claim pod outside the gang finds the reserved GPUs taken
  f.dra.claims["five"] = GpusUnderOneRoot("five", 5);
  f.dra.claims["five"].constraints.clear();
  kube::Pod other = PodWithClaim("five");
  CHECK(f.FilterOn(other, nodes).node_names->empty());

  // the DRA plugin allocated each member's devices before its bind: bound with no GPU ids of topofit's
  int bound = 0;
  for (int i = 0; i < 3; ++i) {
    for (const std::string& node : nodes) {
      if (f.BindTo(ClaimMember(i, absl::StrCat("four-", i)), node).empty()) ++bound;
    }
  }
  CHECK(bound == 3);
  CHECK(f.registry.Render().find("topofit_extender_gang_reservations_total{event=\"landed\"} 1") != std::string::npos);
}

TEST_CASE("A claim pod of a gang whose claims pick particular GPUs places and binds as a single pod",
          "[extender][dra][gang]") {
  ClaimsFixture f;
  const kube::Pod member = ClaimMember(0, "two");  // two GPUs under one PCIe root: judged node by node only
  const codec::ExtenderFilterResult placed = f.FilterOn(member, {"free", "scattered"});
  CHECK(*placed.node_names == std::vector<std::string>{"free"});
  CHECK(f.BindTo(member, "free") == "");
}

TEST_CASE("Without a DraView, a claim pod asks no GPU of topofit, as before", "[extender][dra]") {
  ClaimsFixture f;
  f.extender.JudgeClaimsWith(nullptr);
  const codec::ExtenderFilterResult result = f.Filter(PodWithClaim("two"));
  CHECK(result.node_names->size() == 2);
}

}  // namespace
}  // namespace topofit::scheduler
