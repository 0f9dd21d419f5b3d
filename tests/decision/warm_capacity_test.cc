#include "decision/warm_capacity.h"

#include <memory>

#include <catch2/catch.hpp>

#include "decision/prioritize.h"
#include "tests/kube/builders.h"
#include "tests/topology/test_topologies.h"

namespace topofit::decision {
namespace {

using kube::testing::MakePod;
using topology::testing::Set;

// A DGX-1V (hybrid cube mesh): its only 4-GPU sets linked by NVLink throughout are the quads 0-3 and 4-7.
NodeGpuSnapshot Dgx1(topology::GpuSet used) {
  NodeGpuSnapshot node;
  node.node = "dgx";
  node.topology = std::make_shared<const topology::Topology>(
      topology::testing::MakeTopology(topology::testing::kDgx1V100Rows, "Tesla V100-SXM2-16GB"));
  node.origin = std::make_shared<const NodeOrigin>();
  node.elsewhere = used;
  return node;
}

GpuDemand NvQuad() { return *DemandOf(MakePod().gpus(4).annotation("topofit.io/min-link", "NV")); }

TEST_CASE("Warm capacity counts the buffered sets a node's free GPUs give whole", "[warm_capacity]") {
  const WarmCapacity two_quads({{NvQuad(), 2}});
  const NodeGpuSnapshot empty = Dgx1({});
  CHECK(two_quads.KeptGpus(*empty.topology, empty.free()) == 8);
  // One GPU of each quad in use: six GPUs free, no NVLink quad among them (the ask binds for what is kept,
  // even when the pods of the shape only prefer it).
  CHECK(two_quads.KeptGpus(*empty.topology, Set({1, 2, 3, 5, 6, 7})) == 0);
  CHECK(two_quads.KeptGpus(*empty.topology, Set({1, 2, 3, 4, 5, 6, 7})) == 4);
  // No more than the buffer's replicas.
  CHECK(WarmCapacity({{NvQuad(), 1}}).KeptGpus(*empty.topology, empty.free()) == 4);
  // A shape that asks for no topology is kept by any GPUs.
  CHECK(WarmCapacity({{*DemandOf(MakePod().gpus(2)), 3}}).KeptGpus(*empty.topology, Set({0, 4, 5, 7})) == 4);
  // Largest first: the quad is placed before the pairs, which then take what is left.
  const WarmCapacity mixed({{*DemandOf(MakePod().gpus(2)), 2}, {NvQuad(), 1}});
  CHECK(mixed.KeptGpus(*empty.topology, empty.free()) == 8);
  // Shapes asking for no GPUs or keeping no replicas keep nothing.
  CHECK(WarmCapacity({{*DemandOf(MakePod()), 4}, {NvQuad(), 0}}).empty());
  CHECK(WarmCapacity().KeptGpus(*empty.topology, empty.free()) == 0);
}

TEST_CASE("A pod breaks buffered sets only by the GPUs of theirs it leaves unusable", "[warm_capacity]") {
  const WarmCapacity two_quads({{NvQuad(), 2}});
  const NodeGpuSnapshot empty = Dgx1({});
  // A 1-GPU pod in an intact quad breaks the other three of it.
  CHECK(two_quads.BrokenGpus(empty, Set({0})) == 3);
  // In a quad already broken it breaks nothing: the other quad stays whole.
  const NodeGpuSnapshot broken = Dgx1(Set({0}));
  CHECK(two_quads.BrokenGpus(broken, Set({1})) == 0);
  // A quad-sized pod taking a quad takes its own GPUs only.
  CHECK(two_quads.BrokenGpus(empty, Set({0, 1, 2, 3})) == 0);
  // A pair across the quads breaks both.
  CHECK(two_quads.BrokenGpus(empty, Set({0, 4})) == 6);
  // What the pod itself took of them counts as lost, not broken: it started on buffered capacity.
  CHECK(two_quads.LostGpus(empty, Set({0, 1, 2, 3})) == 4);
  CHECK(two_quads.LostGpus(empty, Set({0})) == 4);
  CHECK(two_quads.LostGpus(broken, Set({1})) == 0);
  // A set broken counts whole even where a smaller buffered shape takes its remains: the quad's buffer is
  // short of it (counting GPUs alone, the 1-GPU buffer taking three of them hid the break on every node).
  const WarmCapacity quad_and_singles({{NvQuad(), 1}, {*DemandOf(MakePod().gpus(1)), 3}});
  const NodeGpuSnapshot one_quad_free = Dgx1(Set({4, 5, 6, 7}));
  CHECK(quad_and_singles.KeptReplicas(*one_quad_free.topology, one_quad_free.free()) == std::vector<int>{1, 0});
  CHECK(quad_and_singles.KeptReplicas(*one_quad_free.topology, Set({1, 2, 3})) == std::vector<int>{0, 3});
  CHECK(quad_and_singles.BrokenGpus(one_quad_free, Set({0})) == 3);
  // Where another quad stays whole, the pod breaks nothing: the buffer is packed again on what is left.
  CHECK(quad_and_singles.BrokenGpus(empty, Set({0})) == 0);
  // Nothing kept, nothing broken.
  CHECK(two_quads.BrokenGpus(Dgx1(Set({0, 4})), Set({1})) == 0);
  CHECK(WarmCapacity().BrokenGpus(empty, Set({0})) == 0);
}

TEST_CASE("The memo gives the answers worked out without it", "[warm_capacity]") {
  const WarmCapacity mixed({{*DemandOf(MakePod().gpus(2).annotation("topofit.io/min-link", "NV")), 2}, {NvQuad(), 1}});
  const NodeGpuSnapshot empty = Dgx1({});
  WarmMemo memo;
  for (uint32_t mask = 0; mask < 256; ++mask) {
    const topology::GpuSet free = topology::GpuSet::FromMask(mask);
    const int plain = mixed.KeptGpus(*empty.topology, free);
    CHECK(mixed.KeptGpus(*empty.topology, free, &memo) == plain);
    CHECK(mixed.KeptGpus(*empty.topology, free, &memo) == plain);  // from the memo
  }
  CHECK(memo.size() == 256);
}

TEST_CASE("Breaking buffered sets costs up to four points, never a node its topology", "[warm_capacity]") {
  CHECK(WarmKeptScore(10, 0, 1) == 10);
  CHECK(WarmKeptScore(10, 3, 1) == 7);   // 4 x 3/4
  CHECK(WarmKeptScore(10, 1, 7) == 9);   // any break costs a point
  CHECK(WarmKeptScore(10, 28, 1) == 6);  // at most kWarmBreakPoints
  CHECK(WarmKeptScore(2, 6, 2) == kMinExtenderScore);
  // A node whose set meets the ask in full scores 10 by its quality share alone (6) and more: after the
  // cost still above any node whose set misses the ask (at most 4).
  CHECK(WarmKeptScore(10, 100, 1) > 4);
}

}  // namespace
}  // namespace topofit::decision
