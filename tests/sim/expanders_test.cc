#include "bench/sim/expanders.h"

#include <catch2/catch.hpp>

#include "tests/sim/scenario.h"

namespace topofit::sim {
namespace {

using testing::Group;
using testing::NvPod;
using testing::Pod;

std::unique_ptr<World> MakeWorld(const Workload& workload, bool topofit_expander = false) {
  Policy policy = StandardPolicies({StockExpander::kLeastWaste})[topofit_expander ? 2 : 0];
  absl::StatusOr<std::unique_ptr<World>> world = World::Create(workload, policy, 1);
  REQUIRE(world.ok());
  return *std::move(world);
}

std::vector<int> GroupsOf(const std::vector<ScaleUpOption>& options) {
  std::vector<int> groups;
  for (const ScaleUpOption& option : options) groups.push_back(option.group);
  return groups;
}

TEST_CASE("least-waste: the worked example", "[expanders]") {
  Workload workload;
  NodeGroupSpec big = Group("big", "p4d.24xlarge", 8, 32.77, 2);
  big.cpu_milli = 192000;
  big.memory_mib = 2048 * 1024;
  workload.groups = {Group("small", "g5.48xlarge", 8, 16.29, 2), big};
  PodSpec pod = Pod("p", 0, kHour, 1);
  pod.cpu_milli = 8000;
  pod.memory_mib = 64 * 1024;
  workload.pods = {pod};
  std::unique_ptr<World> world = MakeWorld(workload);
  // small: (96 - 8)/96 + (768 - 64)/768 = 1.833; big: (192 - 8)/192 + (2048 - 64)/2048 = 1.927.
  std::mt19937_64 rng(1);
  const std::vector<ScaleUpOption> options = {{0, 1, {0}}, {1, 1, {0}}};
  CHECK(GroupsOf(ApplyStockExpander(StockExpander::kLeastWaste, options, *world, rng)) == std::vector<int>{0});
}

TEST_CASE("least-waste ignores GPUs: equal CPU and memory tie", "[expanders]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2), Group("nvlink", "p4d.24xlarge", 8, 32.77, 2)};
  workload.pods = {NvPod("p", 0, kHour, 8)};
  std::unique_ptr<World> world = MakeWorld(workload);
  std::mt19937_64 rng(1);
  const std::vector<ScaleUpOption> options = {{0, 1, {0}}, {1, 1, {0}}};
  CHECK(GroupsOf(ApplyStockExpander(StockExpander::kLeastWaste, options, *world, rng)) == std::vector<int>{0, 1});
  CHECK(GroupsOf(ApplyStockExpander(StockExpander::kPrice, options, *world, rng)) == std::vector<int>{0});
  CHECK(ApplyStockExpander(StockExpander::kRandom, options, *world, rng).size() == 1);
}

TEST_CASE("most-pods and least-nodes keep their best, ties included", "[expanders]") {
  Workload workload;
  workload.groups = {Group("a", "g5.48xlarge", 8, 16.29, 4), Group("b", "p4d.24xlarge", 8, 32.77, 4),
                     Group("c", "p3.16xlarge", 8, 24.48, 4)};
  workload.pods = {Pod("x", 0, kHour, 8), Pod("y", 0, kHour, 8)};
  std::unique_ptr<World> world = MakeWorld(workload);
  std::mt19937_64 rng(1);
  const std::vector<ScaleUpOption> options = {{0, 2, {0, 1}}, {1, 1, {0}}, {2, 2, {0, 1}}};
  CHECK(GroupsOf(ApplyStockExpander(StockExpander::kMostPods, options, *world, rng)) == std::vector<int>{0, 2});
  CHECK(GroupsOf(ApplyStockExpander(StockExpander::kLeastNodes, options, *world, rng)) == std::vector<int>{1});
}

TEST_CASE("topofit's expander drops the PCIe group for an NVLink pod and keeps its choice through the chain",
          "[expanders]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2), Group("nvlink", "p4d.24xlarge", 8, 32.77, 2)};
  workload.pods = {NvPod("p", 0, kHour, 4)};
  std::unique_ptr<World> world = MakeWorld(workload, true);
  const ExpanderChoice choice = ChooseOption({{0, 1, {0}}, {1, 1, {0}}}, *world, {});
  REQUIRE(choice.option.has_value());
  CHECK(choice.option->group == 1);
  CHECK_FALSE(choice.vetoed);
}

TEST_CASE("topofit's expander vetoes when every option would strand the pod", "[expanders]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2)};
  workload.pods = {NvPod("p", 0, kHour, 4)};
  std::unique_ptr<World> world = MakeWorld(workload, true);
  const ExpanderChoice choice = ChooseOption({{0, 1, {0}}}, *world, {});
  CHECK(choice.vetoed);
  CHECK_FALSE(choice.option.has_value());
}

}  // namespace
}  // namespace topofit::sim
