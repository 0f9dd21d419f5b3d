#include <map>
#include <string>

#include <catch2/catch.hpp>

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

}  // namespace
}  // namespace topofit::scheduler
