#include "replay/expanders.h"

#include <catch2/catch.hpp>

#include "tests/replay/scenario.h"

namespace topofit::sim {
namespace {

using testing::Group;
using testing::NvPod;
using testing::Pod;

std::unique_ptr<World> MakeWorld(const Workload& workload, bool topofit_expander = false) {
  Policy policy = StandardPolicies({StockExpander::kLeastWaste})[topofit_expander ? 3 : 0];
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
  const std::vector<ScaleUpOption> options = {{0, 1, {0}, {}}, {1, 1, {0}, {}}};
  CHECK(GroupsOf(ApplyStockExpander(StockExpander::kLeastWaste, options, *world)) == std::vector<int>{0});
}

TEST_CASE("least-waste ignores GPUs: equal CPU and memory tie", "[expanders]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2), Group("nvlink", "p4d.24xlarge", 8, 32.77, 2)};
  workload.pods = {NvPod("p", 0, kHour, 8)};
  std::unique_ptr<World> world = MakeWorld(workload);
  const std::vector<ScaleUpOption> options = {{0, 1, {0}, {}}, {1, 1, {0}, {}}};
  CHECK(GroupsOf(ApplyStockExpander(StockExpander::kLeastWaste, options, *world)) == std::vector<int>{0, 1});
  CHECK(GroupsOf(ApplyStockExpander(StockExpander::kPrice, options, *world)) == std::vector<int>{0});
  CHECK(ApplyStockExpander(StockExpander::kRandom, options, *world).size() == 1);
}

TEST_CASE("most-pods and least-nodes keep their best, ties included", "[expanders]") {
  Workload workload;
  workload.groups = {Group("a", "g5.48xlarge", 8, 16.29, 4), Group("b", "p4d.24xlarge", 8, 32.77, 4),
                     Group("c", "p3.16xlarge", 8, 24.48, 4)};
  workload.pods = {Pod("x", 0, kHour, 8), Pod("y", 0, kHour, 8)};
  std::unique_ptr<World> world = MakeWorld(workload);
  const std::vector<ScaleUpOption> options = {{0, 2, {0, 1}, {}}, {1, 1, {0}, {}}, {2, 2, {0, 1}, {}}};
  CHECK(GroupsOf(ApplyStockExpander(StockExpander::kMostPods, options, *world)) == std::vector<int>{0, 2});
  CHECK(GroupsOf(ApplyStockExpander(StockExpander::kLeastNodes, options, *world)) == std::vector<int>{1});
}

TEST_CASE("topofit's expander drops the PCIe group for an NVLink pod and keeps its choice through the chain",
          "[expanders]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2), Group("nvlink", "p4d.24xlarge", 8, 32.77, 2)};
  workload.pods = {NvPod("p", 0, kHour, 4)};
  std::unique_ptr<World> world = MakeWorld(workload, true);
  const ExpanderChoice choice = ChooseOption({{0, 1, {0}, {}}, {1, 1, {0}, {}}}, *world, {});
  REQUIRE(choice.option.has_value());
  CHECK(choice.option->group == 1);
  CHECK_FALSE(choice.vetoed);
}

TEST_CASE("topofit's expander vetoes when every option would strand the pod", "[expanders]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2)};
  workload.pods = {NvPod("p", 0, kHour, 4)};
  std::unique_ptr<World> world = MakeWorld(workload, true);
  const ExpanderChoice choice = ChooseOption({{0, 1, {0}, {}}}, *world, {});
  CHECK(choice.vetoed);
  CHECK_FALSE(choice.option.has_value());
}

// Under DRA the pod CA sends requests no nvidia.com/gpu; topofit's expander reads its claim (as
// `topofit expander --dra` does from its watch) and judges it as the device-plugin pod above.
TEST_CASE("Under DRA topofit's expander reads a claim pod's GPUs from its claim", "[expanders][dra]") {
  Workload workload;
  workload.groups = {Group("pcie", "g5.48xlarge", 8, 16.29, 2), Group("nvlink", "p4d.24xlarge", 8, 32.77, 2)};
  workload.pods = {NvPod("p", 0, kHour, 4)};
  const Policy topofit = StandardPolicies({StockExpander::kLeastWaste})[3];
  REQUIRE(topofit.topofit_expander);
  std::unique_ptr<World> world = *World::Create(workload, UseDra(topofit), 1);
  REQUIRE(world->PodObject(0).spec.resource_claims.size() == 1);
  const ExpanderChoice both = ChooseOption({{0, 1, {0}, {}}, {1, 1, {0}, {}}}, *world, {});
  REQUIRE(both.option.has_value());
  CHECK(both.option->group == 1);
  CHECK(ChooseOption({{0, 1, {0}, {}}}, *world, {}).vetoed);
}

// Three GPU groups named as a cloud's node groups would be; each option grows one of them by one node.
Workload PriorityWorkload() {
  Workload workload;
  workload.groups = {Group("p4d-24xlarge", "p4d.24xlarge", 8, 32.77, 2), Group("p5-48xlarge", "p5.48xlarge", 8, 98.32, 2),
                     Group("g5-48xlarge", "g5.48xlarge", 8, 16.29, 2)};
  workload.pods = {Pod("p", 0, kHour, 8)};
  return workload;
}

std::vector<int> KeptByPriority(absl::string_view yaml) {
  absl::StatusOr<ExpanderPriorities> priorities = ParseExpanderPriorities(yaml);
  REQUIRE(priorities.ok());
  const Workload workload = PriorityWorkload();
  absl::StatusOr<std::unique_ptr<World>> world =
      World::Create(workload, StandardPolicies({StockExpander::kPriority}, *priorities)[0], 1);
  REQUIRE(world.ok());
  const std::vector<ScaleUpOption> options = {{0, 1, {0}, {}}, {1, 1, {0}, {}}, {2, 1, {0}, {}}};
  return GroupsOf(ApplyStockExpander(StockExpander::kPriority, options, **world));
}

TEST_CASE("priority: the worked example keeps the highest priority matched", "[expanders]") {
  // g5 matches 10, p4d matches 50, p5 matches nothing and is dropped.
  CHECK(KeptByPriority("10:\n  - .*g5.*\n50:\n  - p4d.*\n") == std::vector<int>{0});
  // A group matched at two priorities counts at its highest: g5 at 60 beats p4d at 50.
  CHECK(KeptByPriority("10:\n  - .*g5.*\n50:\n  - p4d.*\n60:\n  - g5\n") == std::vector<int>{2});
}

TEST_CASE("priority: groups sharing the top priority are all kept for the rest of the chain", "[expanders]") {
  CHECK(KeptByPriority("10:\n  - .*g5.*\n50:\n  - p4d.*\n  - ^p5-\n") == std::vector<int>{0, 1});
  CHECK(KeptByPriority("1:\n  - .*\n") == std::vector<int>{0, 1, 2});  // the catch-all upstream suggests
}

TEST_CASE("priority: regexes are found anywhere in the name, as upstream's FindStringIndex", "[expanders]") {
  CHECK(KeptByPriority("10:\n  - 48xl\n") == std::vector<int>{1, 2});
  CHECK(KeptByPriority("10:\n  - ^48xl\n") == std::vector<int>{0, 1, 2});  // anchored: matches nothing
}

TEST_CASE("priority: when no group matches, nothing is filtered, as upstream", "[expanders]") {
  CHECK(KeptByPriority("10:\n  - a100\n") == std::vector<int>{0, 1, 2});
  // Upstream's maximum starts at -1: a priority below it never wins, -1 does.
  CHECK(KeptByPriority("-5:\n  - p4d\n") == std::vector<int>{0, 1, 2});
  CHECK(KeptByPriority("-1:\n  - p4d\n") == std::vector<int>{0});
}

TEST_CASE("priority: the chain names it and ChooseOption narrows with it", "[expanders]") {
  absl::StatusOr<std::vector<StockExpander>> chain = ParseExpanderChain("priority,least-waste");
  REQUIRE(chain.ok());
  CHECK(ExpanderChainName(*chain) == "priority,least-waste");
  absl::StatusOr<ExpanderPriorities> priorities = ParseExpanderPriorities("10:\n  - g5\n");
  REQUIRE(priorities.ok());
  const Workload workload = PriorityWorkload();
  absl::StatusOr<std::unique_ptr<World>> world = World::Create(workload, StandardPolicies(*chain, *priorities)[0], 1);
  REQUIRE(world.ok());
  for (int i = 0; i < 5; ++i) {
    const ExpanderChoice choice = ChooseOption({{0, 1, {0}, {}}, {1, 1, {0}, {}}, {2, 1, {0}, {}}}, **world, {});
    REQUIRE(choice.option.has_value());
    CHECK(choice.option->group == 2);
  }
}

TEST_CASE("priority: the ConfigMap text is parsed as CA parses it", "[expanders]") {
  absl::StatusOr<ExpanderPriorities> parsed = ParseExpanderPriorities("10:\n  - .*t2\\.large.*\n  - ^x-\n50: [m4]\n");
  REQUIRE(parsed.ok());
  CHECK(parsed->by_priority.size() == 2);
  CHECK(parsed->by_priority.at(10).size() == 2);
  CHECK(parsed->Highest("eks-t2.large-a") == 10);
  CHECK(parsed->Highest("eks-t2xlarge-a") == std::nullopt);
  CHECK(parsed->Highest("m4-and-x") == 50);

  // A whole ConfigMap, as `kubectl get configmap -o yaml` writes it.
  absl::StatusOr<ExpanderPriorities> configmap = ParseExpanderPriorities(
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-autoscaler-priority-expander\n"
      "data:\n  priorities: |-\n    10:\n      - g5\n");
  REQUIRE(configmap.ok());
  CHECK(configmap->Highest("g5-48xlarge") == 10);

  for (const char* bad : {"", "10: [\"(\"]\n", "ten:\n  - g5\n", "10: g5\n", "10:\n  - g5\n10:\n  - p4d\n",
                          "10: [g5\n", "- g5\n"}) {
    CAPTURE(bad);
    CHECK_FALSE(ParseExpanderPriorities(bad).ok());
  }
  CHECK(ParseExpanderPriorities("10: [\"(\"]\n").status().message().find("bad regex") != absl::string_view::npos);
}

}  // namespace
}  // namespace topofit::sim
