#include "decision/judged_reasons.h"

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "decision/pod_filter.h"
#include "scheduler/gpu_state.h"
#include "tests/decision/p4d_scale_up.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;
using testing::kIntentSeconds;
using testing::P4d;
using testing::P4dIntentFor;
using topology::GpuSet;

// Nodes of a few shapes, several in the same state (what the memo shares), one the p4d scale-up brought
// for `uid-trainer` (what a hold refuses, built every time).
struct Cluster {
  std::unique_ptr<scheduler::GpuState> state = scheduler::NewInMemoryGpuState();
  std::vector<std::string> names = {"old-1", "old-2", "old-3", "new", "g5-1", "g5-2", "small"};
  Cluster() {
    REQUIRE(state->UpsertNode(P4d("old-1", kIntentSeconds - 3600)).ok());
    REQUIRE(state->UpsertNode(P4d("old-2", kIntentSeconds - 3600)).ok());
    REQUIRE(state->UpsertNode(P4d("old-3", kIntentSeconds - 3600)).ok());
    REQUIRE(state->UpsertNode(P4d("new", kIntentSeconds + 300)).ok());
    for (const char* g5 : {"g5-1", "g5-2"}) {
      REQUIRE(state->UpsertNode(MakeNode().name(g5).label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
    }
    REQUIRE(state->UpsertNode(MakeNode().name("small").label("node.kubernetes.io/instance-type", "g4dn.12xlarge").gpus(4)).ok());
    // old-1 and old-2 in the same state, old-3 in another.
    REQUIRE(state->Assume({"uid-a", "ml", "a"}, "old-1", GpuSet::FromMask(0b00001111)).ok());
    REQUIRE(state->Assume({"uid-b", "ml", "b"}, "old-2", GpuSet::FromMask(0b00001111)).ok());
    REQUIRE(state->Assume({"uid-c", "ml", "c"}, "old-3", GpuSet::FromMask(0b11110000)).ok());
  }
  std::vector<const NodeGpuSnapshot*> Nodes() const {
    std::vector<const NodeGpuSnapshot*> out;
    for (const std::string& name : names) out.push_back(state->Snapshot(name).get());
    return out;
  }
  CapacityHolds Holds() const {
    Preference trainer;
    trainer.pod_uid = "uid-trainer";
    trainer.pod_key = "ml/trainer";
    trainer.gpus = 8;
    return CapacityHolds({P4dIntentFor({{"uid-trainer", 8}})}, {trainer}, Nodes());
  }
};

TEST_CASE("JudgedReasons gives JudgedReasonText's words for every refused node, twice over", "[judged_reasons]") {
  Cluster c;
  const CapacityHolds holds = c.Holds();
  const std::vector<kube::Pod> pods = {
      MakePod().name("one").gpus(1),
      MakePod().name("eight").gpus(8),
      MakePod().name("nv").gpus(4).annotation("topofit.io/min-link", "NV").annotation("topofit.io/topology-policy", "required"),
      MakePod().name("bw").gpus(2).annotation("topofit.io/min-bandwidth", "200GB/s")
          .annotation("topofit.io/topology-policy", "required"),
  };
  const std::vector<const NodeGpuSnapshot*> nodes = c.Nodes();
  int refused = 0;
  for (const kube::Pod& pod : pods) {
    const GpuDemand demand = *DemandOf(pod);
    const JudgedPod judged = JudgedPod::Of(pod);
    FilterMemo memo;
    const PodFilterOutcome outcome = FilterPod(demand, judged, nodes, holds, memo);
    JudgedReasons reasons(judged, holds, nullptr);
    for (int pass = 0; pass < 2; ++pass) {  // the second pass reads every text from the memo
      for (size_t i = 0; i < nodes.size(); ++i) {
        const NodeVerdict& verdict = outcome.verdicts[i];
        if (verdict.fits) continue;
        INFO("pod " << pod.metadata.name << " node " << nodes[i]->node << " pass " << pass);
        CHECK(reasons.For(verdict, *nodes[i]) == JudgedReasonText(verdict, judged, *nodes[i], holds));
        refused += pass == 0 ? 1 : 0;
      }
    }
  }
  CHECK(refused >= 8);  // the table exercises refusals, held ones included
}

}  // namespace
}  // namespace topofit::decision
