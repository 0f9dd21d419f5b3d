#include "history/idle_gpus.h"

#include <memory>

#include <catch2/catch.hpp>

#include "tests/topology/test_topologies.h"

namespace topofit::history {
namespace {

using topology::testing::kDgx1V100Rows;
using topology::testing::MakeTopology;
using topology::testing::Set;

// A DGX-1 V100 node (hybrid cube-mesh) with `used` GPUs taken.
decision::NodeGpuSnapshot Dgx1(topology::GpuSet used) {
  static const auto topology = std::make_shared<const topology::Topology>(MakeTopology(kDgx1V100Rows, "V100"));
  decision::NodeGpuSnapshot node;
  node.node = "dgx-1";
  node.topology = topology;
  node.origin = std::make_shared<const decision::NodeOrigin>();
  node.ours = used;
  return node;
}

decision::GpuDemand NvRequired(int gpus) {
  decision::GpuDemand demand;
  demand.request.gpus = gpus;
  demand.request.min_link = topology::LinkClass::kNvLink;
  demand.policy = decision::TopologyPolicy::kRequired;
  return demand;
}

IdleCounts Counts(std::initializer_list<std::pair<IdleReason, int>> entries) {
  IdleCounts counts{};
  for (const auto& [reason, n] : entries) counts[static_cast<size_t>(reason)] = n;
  return counts;
}

TEST_CASE("free GPUs are classified by the first reason that applies", "[history][idle]") {
  // GPUs 0,5,6,7 taken: 1,2,3,4 free. In the cube-mesh 1-2-3 are NVLink-connected to each other, 4 is
  // connected to none of them: no NVLink set of 4 is free, an NVLink set of 3 is (1,2,3).
  const decision::NodeGpuSnapshot split = Dgx1(Set({0, 5, 6, 7}));
  const decision::NodeGpuSnapshot empty = Dgx1({});
  struct Row {
    const char* name;
    const decision::NodeGpuSnapshot* node;
    bool ready;
    int held;
    std::vector<decision::GpuDemand> pending;
    IdleCounts expected;
    bool runs_pods_without_gpus = false;
  };
  const std::vector<Row> rows = {
      {"not Ready: every free GPU boots", &split, false, 2, {NvRequired(4)}, Counts({{IdleReason::kBooting, 4}})},
      {"held GPUs first, the rest by demand", &split, true, 1, {NvRequired(4)},
       Counts({{IdleReason::kHeldForIntent, 1}, {IdleReason::kFragmented, 3}})},
      {"a 4-GPU NVLink pod waits: the four free GPUs are fragmented", &split, true, 0, {NvRequired(4)},
       Counts({{IdleReason::kFragmented, 4}})},
      {"a 3-GPU NVLink pod fits: not fragmented", &split, true, 0, {NvRequired(4), NvRequired(3)},
       Counts({{IdleReason::kNoDemand, 4}})},
      {"nothing pending: no demand", &split, true, 0, {}, Counts({{IdleReason::kNoDemand, 4}})},
      {"an empty node awaits scale-down", &empty, true, 0, {NvRequired(4)},
       Counts({{IdleReason::kAwaitingScaleDown, 8}})},
      {"an empty node held for an intent is held, not awaiting scale-down", &empty, true, 8, {},
       Counts({{IdleReason::kHeldForIntent, 8}})},
      {"more held than free: all free held", &split, true, 6, {}, Counts({{IdleReason::kHeldForIntent, 4}})},
      {"a node whose GPUs are all free but runs CPU pods is not awaiting scale-down", &empty, true, 0, {NvRequired(4)},
       Counts({{IdleReason::kNoDemand, 8}}), true},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    decision::FilterMemo memo;
    CHECK(ClassifyIdleGpus(*row.node, {row.ready, row.runs_pods_without_gpus}, row.held, row.pending, memo) ==
          row.expected);
  }
  decision::FilterMemo memo;
  CHECK(ClassifyIdleGpus(Dgx1(Set({0, 1, 2, 3, 4, 5, 6, 7})), {}, 0, {NvRequired(1)}, memo) == IdleCounts{});
}

}  // namespace
}  // namespace topofit::history
