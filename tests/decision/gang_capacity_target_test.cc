#include "decision/gang_capacity_target.h"

#include <catch2/catch.hpp>

#include "codec/node_topology.h"
#include "scheduler/gpu_state.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;

constexpr char kPool[] = "cloud.google.com/gke-nodepool";

// A GB200 tray of node pool `pool` in clique `clique`.
kube::Node Tray(const std::string& name, const std::string& pool, const std::string& clique) {
  return MakeNode().name(name).label(kPool, pool).label("nvidia.com/gpu.product", "NVIDIA-GB200")
      .label("nvidia.com/gpu.clique", clique).gpus(4);
}

// A node pool's template as CA offers it: copied from one of its trays, or made up for an empty pool; 18
// trays to a domain.
kube::Node PoolTemplate(const std::string& pool, const std::string& clique = "template") {
  return MakeNode().name("template-node-for-" + pool).label(kPool, pool).label("nvidia.com/gpu.product", "NVIDIA-GB200")
      .label("nvidia.com/gpu.clique", clique).gpus(4).annotation("topofit.io/nodes-per-domain", "18");
}

kube::Pod Member(int gpus = 4) {
  return MakePod().name("train-0").gpus(gpus).annotation("topofit.io/gang", "train")
      .annotation("topofit.io/gang-size", "16").annotation("topofit.io/gang-required-topology", "domain");
}

std::vector<std::string> Expressions(const kube::NodeSelectorTerm& term) {
  std::vector<std::string> out;
  for (const kube::NodeSelectorRequirement& r : term.match_expressions) {
    REQUIRE(r.op == kube::NodeSelectorOperator::kIn);
    REQUIRE(r.values.size() == 1);
    out.push_back(r.key + "=" + r.values.front());
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Cluster {
  // `trays` of pool "rack-a" (clique uuid.a), the first `busy` of them with every GPU taken.
  Cluster(int trays, int busy) {
    for (int i = 0; i < trays; ++i) {
      const std::string name = "a-" + std::to_string(i);
      REQUIRE(state->UpsertNode(Tray(name, "rack-a", "uuid.a")).ok());
      if (i < busy) REQUIRE(state->Assume({"uid-busy-" + name, "ml", "busy-" + name}, name, topology::GpuSet::FirstN(4)).ok());
    }
    snapshots = state->Snapshots();
    for (const auto& snapshot : snapshots) shapes.nodes.push_back(snapshot.get());
    shapes.topologies = &topologies;
  }
  std::optional<GangCapacityTarget> For(int members, const kube::Pod& member = Member()) {
    return GangCapacityTargetFor(member, *DemandOf(member), members, shapes, NvlinkDomainLabels::Default());
  }
  std::unique_ptr<scheduler::GpuState> state = scheduler::NewInMemoryGpuState();
  std::vector<std::shared_ptr<const NodeGpuSnapshot>> snapshots;
  codec::TopologyResolver topologies;
  ClusterShapes shapes;
};

TEST_CASE("A gang asks for what a partly built rack lacks, pinned to that rack's pool and clique", "[gang_capacity_target]") {
  // 12 trays of an 18-tray rack, 4 of them busy: 8 members fit now, 6 trays can still come
  Cluster c(12, 4);
  c.shapes.group_templates = kube::SharedTemplates({{"rack-a", PoolTemplate("rack-a", "uuid.a")}});
  // 14 members: 6 new trays hold 6, not all 14; the free trays are counted on for the other 8
  const std::optional<GangCapacityTarget> target = c.For(14);
  REQUIRE(target);
  CHECK(target->node_group == "rack-a");
  CHECK(target->ask.new_members == 6);
  CHECK(target->ask.new_nodes == 6);
  CHECK(target->ask.domain.id.value == "uuid.a");
  CHECK(Expressions(target->term) ==
        std::vector<std::string>{"cloud.google.com/gke-nodepool=rack-a", "nvidia.com/gpu.clique=uuid.a",
                                 "nvidia.com/gpu.product=NVIDIA-GB200"});
  // 15 members: even grown to 18 trays the rack holds 14
  CHECK_FALSE(c.For(15));
  // a gang of 6 fits on the new trays alone: every member is asked for, none counted on free trays
  const std::optional<GangCapacityTarget> small = c.For(6);
  REQUIRE(small);
  CHECK(small->ask.new_members == 6);
}

TEST_CASE("An empty pool that forms domains is one new domain, pinned by the pool's labels alone", "[gang_capacity_target]") {
  Cluster c(12, 12);  // rack a full
  c.shapes.group_templates = kube::SharedTemplates({{"rack-a", PoolTemplate("rack-a", "uuid.a")}, {"rack-b", PoolTemplate("rack-b")}});
  const std::optional<GangCapacityTarget> target = c.For(16);
  REQUIRE(target);
  CHECK(target->node_group == "rack-b");
  CHECK(target->ask.new_members == 16);
  CHECK(target->ask.new_nodes == 16);
  CHECK(Expressions(target->term) ==
        std::vector<std::string>{"cloud.google.com/gke-nodepool=rack-b", "nvidia.com/gpu.product=NVIDIA-GB200"});
  // 2 GPUs a member: a tray holds 2, so 8 trays for 16
  const std::optional<GangCapacityTarget> halves = c.For(16, Member(2));
  REQUIRE(halves);
  CHECK(halves->ask.new_nodes == 8);
}

TEST_CASE("Groups the gang cannot use, or that do not say their domains' size, are not asked for", "[gang_capacity_target]") {
  Cluster c(0, 0);
  kube::Node unsized = PoolTemplate("rack-b");
  unsized.metadata.annotations.clear();
  kube::Node tainted = PoolTemplate("rack-c");
  tainted.spec.taints.push_back({"dedicated", "inference", kube::TaintEffect::kNoSchedule});
  kube::Node no_domain = PoolTemplate("h100");
  no_domain.metadata.labels.erase("nvidia.com/gpu.clique");
  no_domain.metadata.annotations.clear();
  c.shapes.group_templates = kube::SharedTemplates({{"rack-b", unsized}, {"rack-c", tainted}, {"h100", no_domain}});
  CHECK_FALSE(c.For(4));
  // without a way to resolve templates, nothing
  c.shapes.group_templates = kube::SharedTemplates({{"rack-d", PoolTemplate("rack-d")}});
  CHECK(c.For(4));
  c.shapes.topologies = nullptr;
  CHECK_FALSE(c.For(4));
}

}  // namespace
}  // namespace topofit::decision
