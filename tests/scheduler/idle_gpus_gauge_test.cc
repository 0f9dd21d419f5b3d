#include "scheduler/idle_gpus_gauge.h"

#include <catch2/catch.hpp>

#include "decision/preference.h"
#include "tests/kube/builders.h"
#include "tests/scheduler/extender_fixture.h"

namespace topofit::scheduler {
namespace {

using kube::testing::MakeNode;

TEST_CASE("topofit_idle_gpus counts free GPUs by reason and node group, and zeroes what went", "[idle]") {
  testing::ExtenderFixture f;
  for (const char* name : {"g5-1", "g5-2"}) {
    REQUIRE(f.state->UpsertNode(MakeNode().name(name).label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  }
  REQUIRE(f.state->Assume(PodRef{"uid-small", "ml", "small"}, "g5-1", topology::GpuSet::FromMask(0b11)).ok());
  // An 8-GPU pod waits: g5-1's six free GPUs cannot serve it (fragmented); g5-2 runs nothing.
  decision::Preference waiting;
  waiting.pod_uid = "uid-big";
  waiting.pod_key = "ml/big";
  waiting.gpus = 8;
  f.ledger->RecordPreference(waiting);
  IdleGpusGauge gauge(f.registry, *f.state, *f.ledger);
  gauge.Refresh();
  std::string metrics = f.registry.Render();
  CHECK_THAT(metrics, Catch::Contains(R"(topofit_idle_gpus{reason="fragmented",node_group="g5.48xlarge"} 6)"));
  CHECK_THAT(metrics, Catch::Contains(R"(topofit_idle_gpus{reason="awaiting-scale-down",node_group="g5.48xlarge"} 8)"));

  f.ledger->ForgetPod("uid-big");  // it went: nothing pending, the six are idle for want of demand
  gauge.Refresh();
  metrics = f.registry.Render();
  CHECK_THAT(metrics, Catch::Contains(R"(topofit_idle_gpus{reason="fragmented",node_group="g5.48xlarge"} 0)"));
  CHECK_THAT(metrics, Catch::Contains(R"(topofit_idle_gpus{reason="no-demand",node_group="g5.48xlarge"} 6)"));
}

}  // namespace
}  // namespace topofit::scheduler
