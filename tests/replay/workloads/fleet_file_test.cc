#include "replay/workloads/fleet_file.h"

#include <fstream>
#include <sstream>
#include <tuple>

#include <catch2/catch.hpp>

#include "replay/workloads/gangs.h"
#include "replay/world.h"
#include "tests/replay/workloads/workload_testing.h"

namespace topofit::sim {
namespace {

TEST_CASE("Fleet file: every key read, quantities in Kubernetes units, boot as a range", "[fleet]") {
  const absl::StatusOr<std::vector<NodeGroupSpec>> fleet = ParseFleetYaml(R"(
groups:
- name: nvl72-00
  instance_type: gb200-nvl72-node
  gpu_product: NVIDIA-GB200
  gpus: 4
  cpu: "142"
  memory: 880Gi
  price_per_hour: 42.5
  min_size: 1
  initial_size: 2
  max_size: 18
  boot_seconds: [360, 720]
  nodes_per_domain: 18
  domain_label: topology.k8s.aws/ultraserver-id
  taints: ["nvidia.com/gpu=present:NoSchedule"]
  provision_failure_rate: 0.05
- {name: cpu, cpu: 7500m, memory: 30Gi, max_size: 4, boot_seconds: 90}
)");
  REQUIRE(fleet.ok());
  REQUIRE(fleet->size() == 2);
  const NodeGroupSpec& rack = (*fleet)[0];
  CHECK(rack.name == "nvl72-00");
  CHECK(rack.shape == "gb200-nvl72-node");
  CHECK(rack.gpu_product == "NVIDIA-GB200");
  CHECK(rack.gpus == 4);
  CHECK(rack.cpu_milli == 142'000);
  CHECK(rack.memory_mib == 880 * 1024);
  CHECK(rack.price_per_hour == 42.5);
  CHECK(rack.min_size == 1);
  CHECK(rack.initial_size == 2);
  CHECK(rack.max_size == 18);
  CHECK(rack.provision_delay_min == 360 * kSecond);
  CHECK(rack.provision_delay_max == 720 * kSecond);
  CHECK(rack.nodes_per_domain == 18);
  CHECK(rack.domain_label == "topology.k8s.aws/ultraserver-id");
  CHECK(rack.taints == std::vector<std::string>{"nvidia.com/gpu=present:NoSchedule"});
  CHECK(rack.provision_failure_rate == 0.05);
  const NodeGroupSpec& cpu = (*fleet)[1];
  CHECK(cpu.gpus == 0);
  CHECK(cpu.cpu_milli == 7500);
  CHECK(cpu.provision_delay_min == 90 * kSecond);
  CHECK(cpu.provision_delay_max == 90 * kSecond);
  CHECK(cpu.domain_label == "nvidia.com/gpu.clique");
}

TEST_CASE("Fleet file: mistakes are refused with the group and the key named", "[fleet]") {
  const auto error = [](const char* yaml) {
    absl::StatusOr<std::vector<NodeGroupSpec>> fleet = ParseFleetYaml(yaml);
    REQUIRE_FALSE(fleet.ok());
    CHECK(fleet.status().code() == absl::StatusCode::kInvalidArgument);
    return std::string(fleet.status().message());
  };
  CHECK_THAT(error("groups: []"), Catch::Contains("non-empty list"));
  CHECK_THAT(error("- {name: a, max_size: 2, gpu: 4}"), Catch::Contains("group 1: unknown key \"gpu\""));
  CHECK_THAT(error("- {max_size: 2}"), Catch::Contains("group 1: no name"));
  CHECK_THAT(error("- {name: a}"), Catch::Contains("group 1 (a): no max_size"));
  CHECK_THAT(error("- {name: a, max_size: 2}\n- {name: a, max_size: 3}"), Catch::Contains("\"a\" given twice"));
  CHECK_THAT(error("- {name: a, max_size: 2, initial_size: 3}"), Catch::Contains("min_size <= initial_size <= max_size"));
  CHECK_THAT(error("- {name: a, max_size: 2, memory: lots}"), Catch::Contains("memory \"lots\" is not a quantity"));
  CHECK_THAT(error("- {name: a, max_size: 2, boot_seconds: [600, 60]}"), Catch::Contains("boot_seconds"));
  CHECK_THAT(error("- {name: a, max_size: 2, provision_failure_rate: 2}"), Catch::Contains("[0, 1]"));
  CHECK_THAT(error("- {name: a, max_size: two}"), Catch::Contains("not a valid fleet"));
  CHECK_THAT(error("{name: a"), Catch::Contains("not a valid fleet"));
}

TEST_CASE("Fleet file: the shipped NVL72 example builds", "[fleet]") {
  std::ifstream in(std::string(TOPOFIT_SOURCE_DIR) + "/bench/fleets/nvl72.yaml");
  std::stringstream text;
  text << in.rdbuf();
  const absl::StatusOr<std::vector<NodeGroupSpec>> fleet = ParseFleetYaml(text.str());
  REQUIRE(fleet.ok());
  CHECK(fleet->size() == 5);
  const absl::StatusOr<std::vector<GroupState>> groups = BuildGroups(*fleet);
  REQUIRE(groups.ok());
  CHECK((*groups)[0].template_node.metadata.labels.at("nvidia.com/gpu.clique") == "nvl72-00.0");
  CHECK((*groups)[4].gpus == 8);
}

TEST_CASE("Fleet file: FleetYaml writes what ParseFleetYaml reads back to the same groups", "[fleet]") {
  std::vector<NodeGroupSpec> groups = Nvl72Fleet(2);
  NodeGroupSpec odd;
  odd.name = "odd";
  odd.gpu_product = "NVIDIA-A10";
  odd.gpus = 1;
  odd.cpu_milli = 7500;
  odd.memory_mib = 30000;
  odd.price_per_hour = 1.0123456789;
  odd.min_size = 1;
  odd.initial_size = 2;
  odd.max_size = 3;
  odd.provision_delay_min = 90 * kSecond;
  odd.provision_delay_max = 90 * kSecond;
  odd.taints = {"dedicated=inference:NoSchedule", "nvidia.com/gpu:NoExecute"};
  odd.provision_failure_rate = 0.25;
  groups.push_back(odd);
  const std::string yaml = FleetYaml(groups);
  const absl::StatusOr<std::vector<NodeGroupSpec>> read = ParseFleetYaml(yaml);
  REQUIRE(read.ok());
  REQUIRE(read->size() == groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    const NodeGroupSpec& a = groups[i];
    const NodeGroupSpec& b = (*read)[i];
    INFO(yaml);
    CHECK(std::tie(a.name, a.shape, a.gpu_product, a.gpus, a.taints, a.cpu_milli, a.memory_mib, a.min_size, a.max_size,
                   a.initial_size, a.provision_delay_min, a.provision_delay_max, a.nodes_per_domain, a.domain_label) ==
          std::tie(b.name, b.shape, b.gpu_product, b.gpus, b.taints, b.cpu_milli, b.memory_mib, b.min_size, b.max_size,
                   b.initial_size, b.provision_delay_min, b.provision_delay_max, b.nodes_per_domain, b.domain_label));
    CHECK(b.price_per_hour == Approx(a.price_per_hour).epsilon(1e-9));
    CHECK(b.provision_failure_rate == Approx(a.provision_failure_rate));
  }
}

}  // namespace
}  // namespace topofit::sim
