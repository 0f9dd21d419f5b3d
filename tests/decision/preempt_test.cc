#include "decision/preempt.h"

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
using topology::GpuSet;

TEST_CASE("preempt keeps only the victims whose GPUs the pod needs", "[preempt]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  REQUIRE(state->UpsertNode(MakeNode().name("g5").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  // a holds GPUs 0-1 (socket 0), b holds 4-7 (socket 1), c holds 2-3 (socket 0); nothing free.
  REQUIRE(state->Assume(PodRef{"a", "default", "a"}, "g5", GpuSet::FromMask(0b00000011)).ok());
  REQUIRE(state->Assume(PodRef{"b", "default", "b"}, "g5", GpuSet::FromMask(0b11110000)).ok());
  REQUIRE(state->Assume(PodRef{"c", "default", "c"}, "g5", GpuSet::FromMask(0b00001100)).ok());
  const auto node = state->Snapshot("g5");

  SECTION("a 4-GPU pod needing PHB: one socket's pods suffice; b alone frees a whole socket") {
    const GpuDemand demand = *DemandOf(MakePod().gpus(4).annotation("topofit.io/min-link", "PHB").annotation("topofit.io/topology-policy", "required"));
    // all three free 0..7. Without a: {2..7} holds the PHB quad 4-7, so a is reprieved. Without b as
    // well: {2,3}, too few, so b stays. Without c: {4..7} still fits, so c is reprieved.
    CHECK(TrimVictims(demand, *node, {"a", "b", "c"}) == std::vector<std::string>{"b"});
  }
  SECTION("victims topofit knows nothing of are kept for kube-scheduler's reasons") {
    const GpuDemand demand = *DemandOf(MakePod().gpus(2));
    CHECK(TrimVictims(demand, *node, {"cpu-only", "a"}) == std::vector<std::string>{"cpu-only", "a"});
  }
  SECTION("declines a node where even all victims would not free a fitting set") {
    const GpuDemand demand = *DemandOf(MakePod().gpus(4).annotation("topofit.io/min-link", "PHB").annotation("topofit.io/topology-policy", "required"));
    // a alone frees {0,1}: two GPUs for a 4-GPU pod
    CHECK_FALSE(TrimVictims(demand, *node, {"a"}).has_value());
    // a and c free the socket-0 quad {0..3}: both needed
    CHECK(TrimVictims(demand, *node, {"a", "c"}) == std::vector<std::string>{"a", "c"});
  }
}

}  // namespace
}  // namespace topofit::decision
