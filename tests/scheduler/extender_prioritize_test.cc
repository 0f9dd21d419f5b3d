#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "decision/pod_demand.h"
#include "scheduler/warm_source.h"
#include "tests/kube/builders.h"
#include "tests/scheduler/extender_fixture.h"

namespace topofit::scheduler {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;

std::map<std::string, int64_t> Scores(Extender& extender, const kube::Pod& pod, std::vector<std::string> nodes) {
  absl::StatusOr<std::vector<codec::HostPriority>> scores =
      extender.Prioritize(codec::ExtenderArgs{pod, std::nullopt, std::move(nodes)});
  REQUIRE(scores.ok());
  std::map<std::string, int64_t> by_node;
  for (const codec::HostPriority& p : *scores) by_node[p.host] = p.score;
  return by_node;
}

// Issue 13: quality used to be scored against each node's own best set, so a pod preferring NVLink scored
// an empty g5 (its PCIe quad is the best g5 has) as high as an NVSwitch p4d. Across node types, a node that
// can give the pod the topology it asks for now scores above every node that cannot.
TEST_CASE("prioritize ranks a node that gives the preferred topology above one that cannot, across node types",
          "[prioritize][extender]") {
  testing::ExtenderFixture f;
  REQUIRE(f.state->UpsertNode(MakeNode().name("g5-empty").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  REQUIRE(f.state->UpsertNode(MakeNode().name("p4d-empty").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8)).ok());
  const std::vector<std::string> nodes = {"g5-empty", "p4d-empty"};

  const kube::Pod prefers_nv = MakePod().name("trainer").gpus(4).annotation("topofit.io/min-link", "NV");
  const std::map<std::string, int64_t> preferred = Scores(f.extender, prefers_nv, nodes);
  CHECK(preferred.at("p4d-empty") > preferred.at("g5-empty"));
  // Quality gives 6 of the 10 points: g5's PHB quad earns none of them for this pod.
  CHECK(preferred.at("g5-empty") <= 4);

  // A pod that asks nothing is served alike by both: only packing and cohesion tell them apart, and both
  // nodes are empty 8-GPU nodes whose leftover quad is whole.
  const kube::Pod asks_nothing = MakePod().name("batch").gpus(4);
  const std::map<std::string, int64_t> neutral = Scores(f.extender, asks_nothing, nodes);
  CHECK(neutral.at("p4d-empty") == neutral.at("g5-empty"));
}

// Issue 34: a CapacityBuffer keeps a 4-GPU NVLink quad warm; a 1-GPU pod goes where it breaks no quad, though
// packing alone would put it in the node whose only free quad is the buffer's.
TEST_CASE("prioritize keeps the sets of a CapacityBuffer whole", "[prioritize][extender][warm_capacity]") {
  struct FixedWarm : WarmSource {
    std::shared_ptr<const decision::WarmCapacity> warm = std::make_shared<decision::WarmCapacity>();
    std::shared_ptr<const decision::WarmCapacity> Warm() const override { return warm; }
  };
  testing::ExtenderFixture f;
  for (const char* name : {"quad-only", "quad-and-one"}) {
    REQUIRE(f.state->UpsertNode(MakeNode().name(name).label("node.kubernetes.io/instance-type", "p3.16xlarge").gpus(8)).ok());
  }
  // The cube mesh's quads are 0-3 and 4-7: "quad-only" has the first free and nothing else, "quad-and-one"
  // has it and GPU 5 of the other.
  REQUIRE(f.state->Assume(PodRef{"a", "ml", "a"}, "quad-only", topology::GpuSet::FromMask(0xf0)).ok());
  REQUIRE(f.state->Assume(PodRef{"b", "ml", "b"}, "quad-and-one", topology::GpuSet::FromMask(0xd0)).ok());
  const std::vector<std::string> nodes = {"quad-only", "quad-and-one"};
  const kube::Pod one = MakePod().name("web").gpus(1);

  const kube::Pod quad_pod = MakePod().name("llm").gpus(4).annotation("topofit.io/min-link", "NV");
  const std::map<std::string, int64_t> unbuffered = Scores(f.extender, one, nodes);
  const std::map<std::string, int64_t> quad_unbuffered = Scores(f.extender, quad_pod, nodes);
  CHECK(unbuffered.at("quad-only") >= unbuffered.at("quad-and-one"));

  FixedWarm buffered;
  f.extender.KeepWarmFrom(&buffered);
  CHECK(Scores(f.extender, one, nodes) == unbuffered);  // no buffer yet
  buffered.warm = std::make_shared<decision::WarmCapacity>(
      std::vector<decision::WarmShape>{{*decision::DemandOf(quad_pod), 1}});
  const std::map<std::string, int64_t> kept = Scores(f.extender, one, nodes);
  CHECK(kept.at("quad-and-one") > kept.at("quad-only"));
  CHECK(kept.at("quad-and-one") == unbuffered.at("quad-and-one"));  // it breaks nothing there
  // The pod the buffer is for takes a quad of its own wherever it goes: no cost.
  CHECK(Scores(f.extender, quad_pod, nodes) == quad_unbuffered);

  // Binds count the pods that start on the buffered sets: the 1-GPU pod where kube-scheduler sends it, on
  // GPU 5, did not; the quad pod after it, on the quad, did.
  const kube::Pod web = MakePod().name("web").uid("uid-web").gpus(1);
  const kube::Pod llm = MakePod().name("llm").uid("uid-llm").gpus(4).annotation("topofit.io/min-link", "NV");
  f.kube.PutPod(web);
  f.kube.PutPod(llm);
  CHECK(*f.extender.Bind({"web", "default", "uid-web", "quad-and-one"}) == "");
  CHECK(f.state->AssignmentOf("uid-web")->second == topology::GpuSet::FromMask(0x20));
  CHECK(f.metrics.buffered_starts.Value() == 0);
  CHECK(*f.extender.Bind({"llm", "default", "uid-llm", "quad-and-one"}) == "");
  CHECK(f.metrics.buffered_starts.Value() == 1);
}

}  // namespace
}  // namespace topofit::scheduler
