#include "scheduler/idle_gpus_gauge.h"

#include <catch2/catch.hpp>

#include "decision/preference.h"
#include "tests/history/memory_recorder.h"
#include "tests/server/fake_clock.h"
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

TEST_CASE("a node not Ready yet has its free GPUs booting, then awaiting scale-down once Ready", "[idle]") {
  testing::ExtenderFixture f;
  const auto node = [](const char* version, const char* ready) {
    return MakeNode().name("p4d-new").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8)
        .resourceVersion(version).ready(ready);
  };
  REQUIRE(f.state->UpsertNode(node("1", "False")).ok());  // registered, the kubelet not ready yet
  IdleGpusGauge gauge(f.registry, *f.state, *f.ledger);
  gauge.Refresh();
  std::string metrics = f.registry.Render();
  CHECK_THAT(metrics, Catch::Contains(R"(topofit_idle_gpus{reason="booting",node_group="p4d.24xlarge"} 8)"));
  CHECK_THAT(metrics, !Catch::Contains(R"(topofit_idle_gpus{reason="awaiting-scale-down",node_group="p4d.24xlarge"} 8)"));

  REQUIRE(f.state->UpsertNode(node("2", "True")).ok());  // the watch's next version: Ready, still empty
  gauge.Refresh();
  metrics = f.registry.Render();
  CHECK_THAT(metrics, Catch::Contains(R"(topofit_idle_gpus{reason="booting",node_group="p4d.24xlarge"} 0)"));
  CHECK_THAT(metrics, Catch::Contains(R"(topofit_idle_gpus{reason="awaiting-scale-down",node_group="p4d.24xlarge"} 8)"));
}

TEST_CASE("with a recorder, each refresh records the nodes whose idle GPUs changed", "[idle]") {
  testing::ExtenderFixture f;
  REQUIRE(f.state->UpsertNode(MakeNode().name("g5-1").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  REQUIRE(f.state->UpsertNode(MakeNode().name("g5-2").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  REQUIRE(f.state->Assume(PodRef{"uid-all", "ml", "all"}, "g5-2", topology::GpuSet::FromMask(0xff)).ok());
  history::testing::MemoryRecorder recorder;
  server::FakeClock clock;
  IdleGpusGauge gauge(f.registry, *f.state, *f.ledger);
  gauge.RecordChangesTo(&recorder, &clock);

  // g5-1 runs nothing (8 awaiting scale-down); g5-2 has nothing free, nothing to tell.
  gauge.Refresh();
  std::vector<history::Record> records = recorder.records();
  REQUIRE(records.size() == 1);
  CHECK(records[0].kind == history::Kind::kIdle);
  CHECK(records[0].node == "g5-1");
  CHECK(records[0].node_group == "g5.48xlarge");
  CHECK(records[0].reason == history::Reason::kIdleAwaitingScaleDown);
  CHECK(records[0].gpus == 8);
  CHECK(records[0].time == clock.Now());

  clock.Advance(absl::Seconds(15));
  gauge.Refresh();  // nothing changed
  CHECK(recorder.records().size() == 1);

  // A pod lands on g5-1: its 6 free GPUs are idle for want of demand; g5-2 frees its GPUs.
  REQUIRE(f.state->Assume(PodRef{"uid-small", "ml", "small"}, "g5-1", topology::GpuSet::FromMask(0b11)).ok());
  REQUIRE(f.state->Forget("uid-all"));
  clock.Advance(absl::Seconds(15));
  gauge.Refresh();
  records = recorder.records();
  REQUIRE(records.size() == 3);
  CHECK(records[1].node == "g5-1");
  CHECK(records[1].reason == history::Reason::kIdleNoDemand);
  CHECK(records[1].gpus == 6);
  CHECK(records[2].node == "g5-2");
  CHECK(records[2].reason == history::Reason::kIdleAwaitingScaleDown);
}

}  // namespace
}  // namespace topofit::scheduler
