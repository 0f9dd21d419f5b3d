#include "replay/operator_tuning.h"

#include <catch2/catch.hpp>

#include "replay/workloads/cloud_gpu_fleet.h"
#include "topology/catalog.h"

namespace topofit::sim {
namespace {

std::vector<GroupState> Fleet() {
  absl::StatusOr<std::vector<GroupState>> groups = BuildGroups(CloudGpuFleet(4));
  REQUIRE(groups.ok());
  return *std::move(groups);
}

// A GPU pod as the world builds it: requests and the toleration ExtendedResourceToleration adds.
kube::Pod GpuPod() {
  kube::Pod pod;
  kube::Toleration toleration;
  toleration.key = "nvidia.com/gpu";
  toleration.op = kube::TolerationOperator::kExists;
  toleration.effect = kube::TaintEffect::kNoSchedule;
  pod.spec.tolerations.push_back(toleration);
  return pod;
}

std::vector<std::string> InstanceTypes(const kube::NodeSelector& selector) {
  std::vector<std::string> types;
  for (const kube::NodeSelectorTerm& term : selector.terms) {
    for (const kube::NodeSelectorRequirement& requirement : term.match_expressions) {
      if (requirement.key == topology::kInstanceTypeLabel) types.push_back(requirement.values.at(0));
    }
  }
  return types;
}

TEST_CASE("Operator affinity: the groups whose shape gives the topology, from the catalog", "[operator]") {
  const std::vector<GroupState> fleet = Fleet();
  // 8 GPUs all on NVLink: the NVSwitch boards only (p5 H100, p4d A100), not the PCIe g6e, g5 or g4dn.
  const auto nvlink8 = OperatorAffinity(GpuPod(), {.gpus = 8, .min_link = topology::LinkClass::kNvLink}, fleet);
  REQUIRE(nvlink8.has_value());
  CHECK(InstanceTypes(*nvlink8) == std::vector<std::string>{"p5.48xlarge", "p4d.24xlarge"});
  // Without a link constraint every GPU group of 4 or more GPUs can; the CPU group never.
  const auto any4 = OperatorAffinity(GpuPod(), {.gpus = 4}, fleet);
  REQUIRE(any4.has_value());
  CHECK(InstanceTypes(*any4) ==
        std::vector<std::string>{"p5.48xlarge", "p4d.24xlarge", "g6e.48xlarge", "g5.48xlarge", "g4dn.12xlarge"});
  // More bandwidth than any group gives: no affinity to write.
  CHECK_FALSE(OperatorAffinity(GpuPod(), {.gpus = 8, .min_bandwidth_mbps = 100'000'000}, fleet).has_value());
}

TEST_CASE("Operator affinity keeps the pod's own terms and leaves out groups they exclude", "[operator]") {
  kube::Pod pod = GpuPod();
  kube::NodeSelectorTerm own;
  own.match_expressions.push_back({"nvidia.com/gpu.product", kube::NodeSelectorOperator::kIn, {"NVIDIA-A100-SXM4-40GB"}});
  pod.spec.required_node_affinity = kube::NodeSelector{{own}};
  const auto affinity = OperatorAffinity(pod, {.gpus = 8, .min_link = topology::LinkClass::kNvLink}, Fleet());
  REQUIRE(affinity.has_value());
  REQUIRE(affinity->terms.size() == 1);
  const auto& expressions = affinity->terms[0].match_expressions;
  REQUIRE(expressions.size() == 2);
  CHECK(expressions[0].key == "nvidia.com/gpu.product");                  // the pod's own, ANDed
  CHECK(expressions[1].values == std::vector<std::string>{"p4d.24xlarge"});  // the one group left
}

TEST_CASE("The priority ConfigMap an operator writes prefers the NVLink groups", "[operator]") {
  const std::vector<GroupState> fleet = Fleet();
  CHECK(NvlinkPrioritiesYaml(fleet) == "10:\n  - '.*'\n20:\n  - '^p5\\.48xlarge$'\n  - '^p4d\\.24xlarge$'\n");
  const absl::StatusOr<ExpanderPriorities> parsed = ParseExpanderPriorities(NvlinkPrioritiesYaml(fleet));
  REQUIRE(parsed.ok());
  CHECK(parsed->Highest("p4d.24xlarge") == 20);
  CHECK(parsed->Highest("p4dX24xlarge") == 10);  // the dot is escaped
  CHECK(parsed->Highest("g5.48xlarge") == 10);
  // Without an NVLink group: every group alike.
  const std::vector<GroupState> pcie(fleet.begin() + 2, fleet.end());
  CHECK(NvlinkPrioritiesYaml(pcie) == "10:\n  - '.*'\n");
}

}  // namespace
}  // namespace topofit::sim
