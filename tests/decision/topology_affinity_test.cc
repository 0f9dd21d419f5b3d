#include "decision/topology_affinity.h"

#include <map>
#include <memory>

#include <catch2/catch.hpp>

#include "codec/node_topology.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::NodeSelectorOperator;
using kube::testing::MakeNode;
using kube::testing::MakePod;
using kube::testing::MakeTerm;
using kube::testing::Requirement;

// Node groups as CA offers them, with the topologies the catalog resolves for their templates.
class Groups {
 public:
  Groups& add(const kube::Node& template_node) {
    templates_.push_back(std::make_unique<kube::Node>(template_node));
    const absl::StatusOr<NodeTopology> resolved = resolver_.Resolve(template_node);
    topologies_.push_back(resolved.ok() ? resolved->topology : nullptr);
    shapes_.push_back({templates_.back().get(), topologies_.back().get()});
    return *this;
  }
  const std::vector<GroupShape>& shapes() const { return shapes_; }

 private:
  codec::TopologyResolver resolver_;
  std::vector<std::unique_ptr<kube::Node>> templates_;
  std::vector<std::shared_ptr<const topology::Topology>> topologies_;
  std::vector<GroupShape> shapes_;
};

kube::Node ByInstanceType(const std::string& type, int gpus) {
  return MakeNode().name("template-" + type).label("node.kubernetes.io/instance-type", type).gpus(gpus);
}

// The groups' terms, one string each: "key=value,key=value".
std::vector<std::string> Terms(const std::optional<kube::NodeSelector>& selector) {
  std::vector<std::string> out;
  if (!selector) return out;
  for (const kube::NodeSelectorTerm& term : selector->terms) {
    std::string text;
    for (const kube::NodeSelectorRequirement& r : term.match_expressions) {
      if (!text.empty()) text += ",";
      text += r.key + "=" + (r.values.empty() ? "" : r.values[0]);
    }
    out.push_back(text);
  }
  return out;
}

TEST_CASE("TopologyAffinity names the groups whose empty node gives the required set", "[topology_affinity]") {
  Groups groups;
  groups.add(ByInstanceType("p4d.24xlarge", 8))   // A100 on NVSwitch: NVLink between all 8
      .add(ByInstanceType("g5.48xlarge", 8))      // A10G on PCIe
      .add(ByInstanceType("g4dn.12xlarge", 4))    // T4 on PCIe, 4 GPUs
      .add(MakeNode().name("template-cpu").label("node.kubernetes.io/instance-type", "m5.8xlarge"));  // no GPUs
  const kube::Pod pod = MakePod().gpus(8);
  struct Row {
    const char* name;
    topology::AllocationRequest request;
    std::vector<std::string> terms;
  };
  const Row rows[] = {
      {"8 GPUs on NVLink: the NVSwitch board only", {.gpus = 8, .min_link = topology::LinkClass::kNvLink},
       {"node.kubernetes.io/instance-type=p4d.24xlarge"}},
      {"8 GPUs, any link: both 8-GPU groups, in group order, not the 4-GPU one", {.gpus = 8},
       {"node.kubernetes.io/instance-type=p4d.24xlarge", "node.kubernetes.io/instance-type=g5.48xlarge"}},
      {"4 GPUs, any link: every GPU group", {.gpus = 4},
       {"node.kubernetes.io/instance-type=p4d.24xlarge", "node.kubernetes.io/instance-type=g5.48xlarge",
        "node.kubernetes.io/instance-type=g4dn.12xlarge"}},
      {"more bandwidth than any group gives: none", {.gpus = 8, .min_bandwidth_mbps = 100'000'000}, {}},
  };
  for (const Row& row : rows) {
    DYNAMIC_SECTION(row.name) {
      const std::optional<kube::NodeSelector> affinity = TopologyAffinity(pod, row.request, groups.shapes());
      CHECK(affinity.has_value() == !row.terms.empty());
      CHECK(Terms(affinity) == row.terms);
    }
  }
}

TEST_CASE("TopologyAffinity names a template without instance type by GPU product and count, once per shape",
          "[topology_affinity]") {
  const auto dgx = [](const std::string& name) {
    return MakeNode().name(name).label("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB").label("nvidia.com/gpu.count", "8").gpus(8);
  };
  Groups groups;
  groups.add(dgx("template-a")).add(dgx("template-b")).add(MakeNode().name("template-unnamed").gpus(8));
  const auto affinity = TopologyAffinity(MakePod().gpus(8), {.gpus = 8}, groups.shapes());
  // The unlabelled group gives 8 GPUs too (PCIe fallback) but no term can name it: left out.
  CHECK(Terms(affinity) == std::vector<std::string>{"nvidia.com/gpu.product=NVIDIA-A100-SXM4-40GB,nvidia.com/gpu.count=8"});
}

TEST_CASE("TopologyAffinity leaves out the groups the pod may not use and ANDs its own terms", "[topology_affinity]") {
  Groups groups;
  groups.add(ByInstanceType("p5.48xlarge", 8))
      .add(MakeNode().name("template-p4d").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8)
               .taint("reserved", "research", kube::TaintEffect::kNoSchedule));
  const topology::AllocationRequest nvlink8{.gpus = 8, .min_link = topology::LinkClass::kNvLink};

  SECTION("a tainted group only for pods that tolerate it") {
    CHECK(Terms(TopologyAffinity(MakePod().gpus(8), nvlink8, groups.shapes())) ==
          std::vector<std::string>{"node.kubernetes.io/instance-type=p5.48xlarge"});
    const kube::Pod tolerating =
        MakePod().gpus(8).toleration("reserved", kube::TolerationOperator::kEqual, "research", kube::TaintEffect::kNoSchedule);
    CHECK(Terms(TopologyAffinity(tolerating, nvlink8, groups.shapes())).size() == 2);
  }
  SECTION("own terms that exclude every group: nothing to write") {
    const kube::Pod pod =
        MakePod()
            .gpus(8)
            .toleration("reserved", kube::TolerationOperator::kExists, "", kube::TaintEffect::kNoSchedule)
            .requiredTerm(MakeTerm().expression(Requirement("zone", NodeSelectorOperator::kIn, {"a"})))
            .requiredTerm(MakeTerm().expression(Requirement("zone", NodeSelectorOperator::kIn, {"b"})));
    // The templates carry no zone label, so the pod's own affinity excludes both: nothing to write.
    CHECK_FALSE(TopologyAffinity(pod, nvlink8, groups.shapes()).has_value());
  }
  SECTION("own terms that admit the groups are kept in front of the group's") {
    const kube::Pod pod =
        MakePod()
            .gpus(8)
            .toleration("reserved", kube::TolerationOperator::kExists, "", kube::TaintEffect::kNoSchedule)
            .requiredTerm(MakeTerm().expression(Requirement("zone", NodeSelectorOperator::kDoesNotExist)))
            .requiredTerm(MakeTerm().expression(Requirement("spot", NodeSelectorOperator::kDoesNotExist)));
    CHECK(Terms(TopologyAffinity(pod, nvlink8, groups.shapes())) ==
          std::vector<std::string>{"zone=,node.kubernetes.io/instance-type=p5.48xlarge",
                                   "zone=,node.kubernetes.io/instance-type=p4d.24xlarge",
                                   "spot=,node.kubernetes.io/instance-type=p5.48xlarge",
                                   "spot=,node.kubernetes.io/instance-type=p4d.24xlarge"});
  }
}

TEST_CASE("CanGiveTopology: no topology gives nothing, fewer GPUs than asked neither", "[topology_affinity]") {
  Groups groups;
  groups.add(ByInstanceType("g4dn.12xlarge", 4));
  CHECK_FALSE(CanGiveTopology(nullptr, {.gpus = 1}));
  CHECK(CanGiveTopology(groups.shapes()[0].topology, {.gpus = 4}));
  CHECK_FALSE(CanGiveTopology(groups.shapes()[0].topology, {.gpus = 8}));
  CHECK_FALSE(CanGiveTopology(groups.shapes()[0].topology, {.gpus = 2, .min_link = topology::LinkClass::kNvLink}));
}

}  // namespace
}  // namespace topofit::decision
