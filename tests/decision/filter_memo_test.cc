#include "decision/filter_memo.h"

#include <random>

#include <catch2/catch.hpp>

#include "decision/prioritize.h"
#include "scheduler/gpu_state.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;

// The memo must be invisible: for every case it answers what FilterNode and PrioritizeNode answer, however
// often a case repeats and whatever it evicted. Seeded random cases over two shapes, all GPU counts, both
// policies and every occupancy.
TEST_CASE("FilterMemo answers exactly what FilterNode and PrioritizeNode answer", "[filter_memo]") {
  std::unique_ptr<scheduler::GpuState> state = scheduler::NewInMemoryGpuState();
  REQUIRE(state->UpsertNode(MakeNode().name("p4d").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8)).ok());
  REQUIRE(state->UpsertNode(MakeNode().name("g5").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  const NodeGpuSnapshot base[] = {*state->Snapshot("p4d"), *state->Snapshot("g5")};

  std::mt19937 rng(7);
  FilterMemo memo(/*max_entries=*/64);  // small, so that eviction happens too
  for (int i = 0; i < 3000; ++i) {
    NodeGpuSnapshot node = base[rng() % 2];
    node.ours = topology::GpuSet::FromMask(rng() & 0xff);
    kube::Pod pod = MakePod().gpus(static_cast<int>(rng() % 10));
    if (rng() % 2) pod = MakePod().gpus(static_cast<int>(rng() % 10)).annotation("topofit.io/min-link", "NV");
    if (rng() % 3 == 0) pod.metadata.annotations["topofit.io/topology-policy"] = "required";
    const GpuDemand demand = *DemandOf(pod);

    const FilterMemo::Entry& memoised = memo.FilterAndScore(demand, node);
    const NodeVerdict direct = FilterNode(demand, node);
    INFO("case " << i << ": " << demand.request.gpus << " GPUs, free " << node.free().ToString());
    CHECK(memoised.verdict.fits == direct.fits);
    CHECK(memoised.verdict.unresolvable == direct.unresolvable);
    CHECK(memoised.verdict.refusal == direct.refusal);
    CHECK(memoised.verdict.insufficient == direct.insufficient);
    CHECK(memoised.verdict.chosen.has_value() == direct.chosen.has_value());
    if (direct.chosen) CHECK(memoised.verdict.chosen->gpus == direct.chosen->gpus);
    CHECK(memoised.score == PrioritizeNode(demand, node));
    CHECK(memo.size() <= 64);
  }
}

TEST_CASE("FilterMemo works a repeated case out once", "[filter_memo]") {
  std::unique_ptr<scheduler::GpuState> state = scheduler::NewInMemoryGpuState();
  REQUIRE(state->UpsertNode(MakeNode().name("a").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8)).ok());
  REQUIRE(state->UpsertNode(MakeNode().name("b").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8)).ok());
  const GpuDemand four = *DemandOf(MakePod().gpus(4));
  FilterMemo memo;
  // Two nodes of one shape in the same state are one case (the catalog shares their topology).
  const FilterMemo::Entry& first = memo.FilterAndScore(four, *state->Snapshot("a"));
  CHECK(&memo.FilterAndScore(four, *state->Snapshot("b")) == &first);
  CHECK(memo.size() == 1);
  // Another demand, or other free GPUs, is another case.
  memo.FilterAndScore(*DemandOf(MakePod().gpus(2)), *state->Snapshot("a"));
  REQUIRE(state->Assume(scheduler::PodRef{"x", "default", "x"}, "b", topology::GpuSet::FromMask(0b1)).ok());
  memo.FilterAndScore(four, *state->Snapshot("b"));
  CHECK(memo.size() == 3);
  // A set that must include GPU 0 (the kubelet's must-include devices) is another case too.
  GpuDemand with_gpu0 = four;
  with_gpu0.request.required = topology::GpuSet::FromMask(0b1);
  CHECK(memo.FilterAndScore(with_gpu0, *state->Snapshot("a")).verdict.chosen->gpus.contains(with_gpu0.request.required));
  CHECK(memo.size() == 4);
}

}  // namespace
}  // namespace topofit::decision
