#include "decision/prioritize.h"

#include <catch2/catch.hpp>

#include "scheduler/gpu_state.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;
using scheduler::GpuState;
using scheduler::NewInMemoryGpuState;
using scheduler::PodRef;

TEST_CASE("prioritize rescales the node fit score to 0..10", "[prioritize]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  REQUIRE(state->UpsertNode(MakeNode().name("empty").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  REQUIRE(state->UpsertNode(MakeNode().name("half").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  // The other pod holds the second NUMA half of "half".
  REQUIRE(state->Assume(PodRef{"other", "default", "other"}, "half", topology::GpuSet::FromMask(0xf0)).ok());
  const GpuDemand four = *DemandOf(MakePod().gpus(4));

  // empty: quality 1000 (a PHB quad, the best 4-set), packing 4/8 = 500, leftover {4..7} all PHB -> 1000
  //   (600*1000 + 250*500 + 150*1000) / 10000 = 87 -> 87 * 10 / 100 = 8
  CHECK(PrioritizeNode(four, *state->Snapshot("empty")) == 8);
  // half: the free quad fills the node: quality, packing and cohesion all 1000 -> 100 -> 10
  CHECK(PrioritizeNode(four, *state->Snapshot("half")) == 10);
  // a pod without GPUs is neutral; a pod that cannot fit scores the minimum
  CHECK(PrioritizeNode(*DemandOf(MakePod()), *state->Snapshot("empty")) == kMinExtenderScore);
  CHECK(PrioritizeNode(*DemandOf(MakePod().gpus(6)), *state->Snapshot("half")) == kMinExtenderScore);
}

}  // namespace
}  // namespace topofit::decision
