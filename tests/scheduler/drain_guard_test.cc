#include "scheduler/drain_guard.h"

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/kube/builders.h"
#include "tests/scheduler/extender_fixture.h"
#include "tests/scheduler/fake_dra_view.h"

namespace topofit::scheduler {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;

kube::Node Node(const std::string& name, const std::string& instance_type) {
  return MakeNode().name(name).label("node.kubernetes.io/instance-type", instance_type).gpus(8);
}

// The calls that touched CA's annotation, "annotate ns/name key=value", "remove-annotation ns/name key", or
// "bind-annotation ns/name key=value" (set at bind, on the Binding).
std::vector<std::string> SafeToEvictCalls(const testing::FakeKubeClient& kube) {
  std::vector<std::string> calls;
  for (const testing::FakeKubeClient::Call& call : kube.calls()) {
    if (call.detail.find("safe-to-evict") != std::string::npos) calls.push_back(call.verb + " " + call.pod + " " + call.detail);
  }
  return calls;
}

// topofit_drain_guard_pods as {safe_to_evict="false", "unset"}: the pods kept and those released.
std::pair<int, int> GuardedPods(server::MetricsRegistry& registry) {
  const std::string text = registry.Render();
  const auto value = [&text](const std::string& state) {
    const std::string series = "topofit_drain_guard_pods{safe_to_evict=\"" + state + "\"} ";
    const size_t at = text.find(series);
    REQUIRE(at != std::string::npos);
    return std::stoi(text.substr(at + series.size()));
  };
  return {value("false"), value("unset")};
}

// A trainer that requires NVLink bound to p4d-1 while the only other node is a g5: a drain would strand it.
struct Bound : testing::ExtenderFixture {
  Bound() {
    REQUIRE(state->UpsertNode(Node("p4d-1", "p4d.24xlarge")).ok());
    REQUIRE(state->UpsertNode(Node("g5-1", "g5.48xlarge")).ok());
    kube.PutPod(trainer);
    REQUIRE(*extender.Bind({"trainer", "default", "uid-trainer", "p4d-1"}) == "");
  }
  const kube::Pod trainer = MakePod().name("trainer").uid("uid-trainer").gpus(4)
                                .annotation("topofit.io/min-link", "NV").annotation("topofit.io/topology-policy", "required");
};

TEST_CASE("A pod no other node could give its topology is kept from CA's drains until one can", "[drain_guard]") {
  Bound f;
  CHECK(SafeToEvictCalls(f.kube) ==
        std::vector<std::string>{"bind-annotation default/trainer cluster-autoscaler.kubernetes.io/safe-to-evict=false"});
  CHECK(GuardedPods(f.registry) == std::pair(1, 0));

  // An empty p4d node is the next one CA removes: it gives the trainer nowhere to go.
  REQUIRE(f.state->UpsertNode(Node("p4d-2", "p4d.24xlarge")).ok());
  f.drain_guard.Refresh();
  CHECK(GuardedPods(f.registry) == std::pair(1, 0));

  // Busy, with 4 NVLink GPUs free: a drain would move the trainer there, so CA may consolidate.
  REQUIRE(f.state->Assume(PodRef{"uid-other", "default", "other"}, "p4d-2", topology::GpuSet::FirstN(4)).ok());
  f.drain_guard.Refresh();
  CHECK(GuardedPods(f.registry) == std::pair(0, 1));
  CHECK(SafeToEvictCalls(f.kube).back() == "remove-annotation default/trainer cluster-autoscaler.kubernetes.io/safe-to-evict");

  // p4d-2 fills up: kept again. A refresh with nothing changed patches nothing.
  REQUIRE(f.state->Assume(PodRef{"uid-more", "default", "more"}, "p4d-2", topology::GpuSet::FirstN(8).without(topology::GpuSet::FirstN(4))).ok());
  f.drain_guard.Refresh();
  f.drain_guard.Refresh();
  CHECK(GuardedPods(f.registry) == std::pair(1, 0));
  CHECK(SafeToEvictCalls(f.kube).size() == 3);
  CHECK(SafeToEvictCalls(f.kube).back() == "annotate default/trainer cluster-autoscaler.kubernetes.io/safe-to-evict=false");

  // The trainer ends: forgotten, nothing patched.
  REQUIRE(f.state->Forget("uid-trainer"));
  f.drain_guard.Refresh();
  CHECK(GuardedPods(f.registry) == std::pair(0, 0));
  CHECK(SafeToEvictCalls(f.kube).size() == 3);
}

TEST_CASE("A patch the API server fails is tried again at the next refresh, and a pod it no longer has is forgotten",
          "[drain_guard]") {
  Bound f;
  REQUIRE(f.state->UpsertNode(Node("p4d-2", "p4d.24xlarge")).ok());
  REQUIRE(f.state->Assume(PodRef{"uid-other", "default", "other"}, "p4d-2", topology::GpuSet::FirstN(4)).ok());
  f.kube.FailAnnotationsWith(absl::UnavailableError("the API server is restarting"));
  f.drain_guard.Refresh();
  CHECK(GuardedPods(f.registry) == std::pair(1, 0));  // still kept: the annotation is still there
  f.kube.FailAnnotationsWith(absl::OkStatus());
  f.drain_guard.Refresh();
  CHECK(GuardedPods(f.registry) == std::pair(0, 1));
  CHECK(SafeToEvictCalls(f.kube).size() == 3);  // set at bind, the failed removal, the removal

  // The pod is deleted while the state still holds its GPUs (the watch lags): the 404 forgets it.
  REQUIRE(f.state->Forget("uid-other"));
  f.kube.DeletePod("default", "trainer");
  f.drain_guard.Refresh();
  CHECK(GuardedPods(f.registry) == std::pair(0, 0));
}

TEST_CASE("A pod another busy node could serve is not kept at bind, and kept once that node fills", "[drain_guard]") {
  testing::ExtenderFixture f;
  REQUIRE(f.state->UpsertNode(Node("p4d-1", "p4d.24xlarge")).ok());
  REQUIRE(f.state->UpsertNode(Node("p4d-2", "p4d.24xlarge")).ok());
  REQUIRE(f.state->Assume(PodRef{"uid-other", "default", "other"}, "p4d-2", topology::GpuSet::FirstN(2)).ok());
  const kube::Pod asking = MakePod().name("asking").uid("uid-asking").gpus(4)
                               .annotation("topofit.io/min-link", "NV").annotation("topofit.io/expected-runtime", "2h");
  f.kube.PutPod(asking);
  REQUIRE(*f.extender.Bind({"asking", "default", "uid-asking", "p4d-1"}) == "");
  CHECK(SafeToEvictCalls(f.kube).empty());
  CHECK(GuardedPods(f.registry) == std::pair(0, 1));

  REQUIRE(f.state->Assume(PodRef{"uid-more", "default", "more"}, "p4d-2", topology::GpuSet::FirstN(6).without(topology::GpuSet::FirstN(2))).ok());
  f.drain_guard.Refresh();
  CHECK(SafeToEvictCalls(f.kube) == std::vector<std::string>{
                                        "annotate default/asking cluster-autoscaler.kubernetes.io/safe-to-evict=false"});
}

TEST_CASE("Pods that take any set, and pods that say safe-to-evict themselves, are not the guard's", "[drain_guard]") {
  testing::ExtenderFixture f;
  REQUIRE(f.state->UpsertNode(Node("p4d-1", "p4d.24xlarge")).ok());
  const kube::Pod plain = MakePod().name("plain").uid("uid-plain").gpus(4);
  const kube::Pod preferring = MakePod().name("preferring").uid("uid-preferring").gpus(2).annotation("topofit.io/min-link", "NV");
  const kube::Pod owned = MakePod().name("owned").uid("uid-owned").gpus(2)
                              .annotation("topofit.io/min-link", "NV").annotation("topofit.io/topology-policy", "required")
                              .annotation("cluster-autoscaler.kubernetes.io/safe-to-evict", "true");
  for (const kube::Pod& pod : {plain, preferring, owned}) {
    f.kube.PutPod(pod);
    REQUIRE(*f.extender.Bind({pod.metadata.name, "default", pod.metadata.uid, "p4d-1"}) == "");
  }
  CHECK(SafeToEvictCalls(f.kube).empty());
  CHECK(GuardedPods(f.registry) == std::pair(0, 0));
}

// A trainer whose 4 GPUs come from its claim "trainer-gpus" (requiring NVLink), bound to p4d-1 while the
// only other node is a g5. kube-scheduler's DRA plugin allocated the devices before the bind; the claim watch
// shows them some moments later.
struct ClaimBound : testing::ExtenderFixture {
  ClaimBound() {
    REQUIRE(state->UpsertNode(Node("p4d-1", "p4d.24xlarge")).ok());
    REQUIRE(state->UpsertNode(Node("g5-1", "g5.48xlarge")).ok());
    kube::ResourceClaim claim;
    claim.metadata.name = "trainer-gpus";
    claim.metadata.namespace_name = "ml";
    claim.metadata.uid = "uid-claim";
    claim.allocated = true;
    claim.node_name = "p4d-1";
    dra.claims[claim.metadata.name] = claim;
    extender.JudgeClaimsWith(&dra);
    trainer.spec.resource_claims = {
        {.name = "gpus", .resource_claim_name = "trainer-gpus", .resource_claim_template_name = std::nullopt}};
  }
  // `pod`, known to the API server, bound to `node`.
  std::string Bind(const kube::Pod& pod, const std::string& node) {
    kube.PutPod(pod);
    return BindTo(pod, node);
  }
  // The claim watch shows the claim holding `gpus` of `node`.
  void ClaimHolds(const std::string& node, topology::GpuSet gpus) {
    REQUIRE(state->Assume(PodRef{ClaimHolderUid("uid-claim"), "ml", "trainer-gpus"}, node, gpus).ok());
  }
  testing::FakeDraView dra;
  kube::Pod trainer = MakePod().name("trainer").uid("uid-trainer").namespaceName("ml")
                          .annotation("topofit.io/min-link", "NV").annotation("topofit.io/topology-policy", "required");
};

TEST_CASE("A claim pod is judged on the devices its claim holds, once the claim watch shows them", "[drain_guard][dra]") {
  ClaimBound f;
  REQUIRE(f.Bind(f.trainer, "p4d-1") == "");
  CHECK(SafeToEvictCalls(f.kube).empty());  // its set is not known at bind
  CHECK(GuardedPods(f.registry) == std::pair(0, 1));
  f.drain_guard.Refresh();  // not shown yet: still waiting
  CHECK(GuardedPods(f.registry) == std::pair(0, 1));

  // 4 NVLink GPUs of p4d-1, and no other node could give them: kept
  f.ClaimHolds("p4d-1", topology::GpuSet::FirstN(4));
  f.drain_guard.Refresh();
  CHECK(GuardedPods(f.registry) == std::pair(1, 0));
  CHECK(SafeToEvictCalls(f.kube) ==
        std::vector<std::string>{"annotate ml/trainer cluster-autoscaler.kubernetes.io/safe-to-evict=false"});

  // the claim goes (the pod ended): forgotten
  f.state->Forget(ClaimHolderUid("uid-claim"));
  f.drain_guard.Refresh();
  CHECK(GuardedPods(f.registry) == std::pair(0, 0));
}

TEST_CASE("A claim pod whose devices never show, or fall short of its ask, is not the guard's", "[drain_guard][dra]") {
  ClaimBound f;
  REQUIRE(f.Bind(f.trainer, "p4d-1") == "");
  for (int i = 0; i < DrainGuard::kClaimRefreshes; ++i) f.drain_guard.Refresh();
  CHECK(GuardedPods(f.registry) == std::pair(0, 0));

  // bound again elsewhere (a new pod of the same claim): 4 GPUs of the g5 are no NVLink set, nothing to keep
  f.trainer.metadata.uid = "uid-trainer-2";
  f.trainer.metadata.name = "trainer-2";
  REQUIRE(f.Bind(f.trainer, "g5-1") == "");
  f.ClaimHolds("g5-1", topology::GpuSet::FirstN(4));
  f.drain_guard.Refresh();
  CHECK(GuardedPods(f.registry) == std::pair(0, 0));
  CHECK(SafeToEvictCalls(f.kube).empty());

  // a pod asking for no topology is never tracked
  kube::Pod plain = f.trainer;
  plain.metadata.uid = "uid-plain";
  plain.metadata.name = "plain";
  plain.metadata.annotations.clear();
  REQUIRE(f.Bind(plain, "p4d-1") == "");
  CHECK(GuardedPods(f.registry) == std::pair(0, 0));
}

}  // namespace
}  // namespace topofit::scheduler
