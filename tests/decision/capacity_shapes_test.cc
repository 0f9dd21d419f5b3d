#include "decision/capacity_shapes.h"

#include <algorithm>

#include <catch2/catch.hpp>

#include "codec/node_topology.h"
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

kube::NodeSelectorTerm Term(std::vector<std::pair<std::string, std::string>> labels) {
  kube::NodeSelectorTerm term;
  for (auto& [key, value] : labels) term.match_expressions.push_back({key, kube::NodeSelectorOperator::kIn, {value}});
  return term;
}

bool Same(const std::optional<kube::NodeSelectorTerm>& a, const kube::NodeSelectorTerm& b) {
  return a.has_value() && SameShapeTerm(*a, b);
}

bool Same(const std::vector<kube::NodeSelectorTerm>& a, const std::vector<kube::NodeSelectorTerm>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), SameShapeTerm);
}

TEST_CASE("ShapeTerm names a shape by its instance type, else by its GPU product and count", "[capacity_shapes]") {
  CHECK(Same(ShapeTerm({{"node.kubernetes.io/instance-type", "p4d.24xlarge"}, {"nvidia.com/gpu.product", "A100"}}),
             Term({{"node.kubernetes.io/instance-type", "p4d.24xlarge"}})));
  CHECK(Same(ShapeTerm({{"nvidia.com/gpu.product", "Tesla-V100-SXM2-16GB"}, {"nvidia.com/gpu.count", "8"}}),
             Term({{"nvidia.com/gpu.product", "Tesla-V100-SXM2-16GB"}, {"nvidia.com/gpu.count", "8"}})));
  CHECK_FALSE(SameShapeTerm(Term({{"nvidia.com/gpu.count", "8"}}), Term({{"nvidia.com/gpu.count", "4"}})));
  CHECK_FALSE(ShapeTerm({{"nvidia.com/gpu.product", "Tesla-V100-SXM2-16GB"}}).has_value());  // which count?
  CHECK_FALSE(ShapeTerm({{"kubernetes.io/hostname", "n1"}}).has_value());
}

// A g5 (PCIe) and a p4d (NVSwitch) node, and what capacity for a 4-GPU pod may be.
struct Cluster {
  explicit Cluster(const char* g5_instance_type = "g5.48xlarge") {
    kube::testing::NodeBuilder g5 = MakeNode().name("g5").gpus(8).created(kIntentSeconds - 3600);
    if (g5_instance_type != nullptr) g5.label("node.kubernetes.io/instance-type", g5_instance_type);
    REQUIRE(state->UpsertNode(g5).ok());
    REQUIRE(state->UpsertNode(P4d("p4d", kIntentSeconds - 3600)).ok());
    shapes.nodes = {state->Snapshot("g5").get(), state->Snapshot("p4d").get()};
  }
  Preference For(const kube::Pod& pod) const { return PreferenceFor(pod, *DemandOf(pod), {"g5"}, PreferredSet::kAsked); }
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  ClusterShapes shapes;
};

TEST_CASE("ShapeTermsFor confines capacity to the shapes that give the set the preference asks", "[capacity_shapes]") {
  Cluster cluster;
  const kube::Pod nvlink = MakePod().name("trainer").gpus(4).annotation("topofit.io/min-link", "NV");
  CHECK(Same(ShapeTermsFor(cluster.For(nvlink), cluster.shapes), {Term({{"node.kubernetes.io/instance-type", "p4d.24xlarge"}})}));

  SECTION("a preference every shape serves is not confined") {
    CHECK(ShapeTermsFor(cluster.For(MakePod().name("plain").gpus(4)), cluster.shapes).empty());
  }
  SECTION("nor one no shape serves: there is nothing to confine to") {
    const kube::Pod huge = MakePod().name("huge").gpus(4).annotation("topofit.io/min-bandwidth", "100TB/s");
    CHECK(ShapeTermsFor(cluster.For(huge), cluster.shapes).empty());
  }
  SECTION("the enforced set only, when the pod did not ask for its preferred one") {
    const Preference enforced = PreferenceFor(nvlink, *DemandOf(nvlink), {"g5"}, PreferredSet::kEnforced);
    CHECK(ShapeTermsFor(enforced, cluster.shapes).empty());
  }
  SECTION("a group template at size zero counts, once per shape") {
    Cluster without_p4d_node;
    without_p4d_node.shapes.nodes.pop_back();
    codec::TopologyResolver topologies;
    without_p4d_node.shapes.group_templates = kube::SharedTemplates({{"p4d-a", P4d("template-a", 0)}, {"p4d-b", P4d("template-b", 0)}});
    without_p4d_node.shapes.topologies = &topologies;
    CHECK(Same(ShapeTermsFor(without_p4d_node.For(nvlink), without_p4d_node.shapes),
               {Term({{"node.kubernetes.io/instance-type", "p4d.24xlarge"}})}));
  }
}

TEST_CASE("ShapeTermsFor does not confine when a shape that serves has no label to name it by", "[capacity_shapes]") {
  // Both nodes serve a plain 4-GPU set; the g5 has no instance type nor GPU count label.
  Cluster cluster(nullptr);
  cluster.shapes.nodes.pop_back();
  REQUIRE(cluster.shapes.nodes[0]->topology->gpu_count() == 8);
  REQUIRE_FALSE(ShapeTerm(cluster.shapes.nodes[0]->origin->labels).has_value());
  REQUIRE(cluster.state->UpsertNode(MakeNode().name("t4").label("node.kubernetes.io/instance-type", "g4dn.xlarge").gpus(1)
                                        .created(kIntentSeconds - 3600)).ok());
  cluster.shapes.nodes.push_back(cluster.state->Snapshot("t4").get());  // too small: left out
  CHECK(ShapeTermsFor(cluster.For(MakePod().name("plain").gpus(4)), cluster.shapes).empty());
}

}  // namespace
}  // namespace topofit::decision
