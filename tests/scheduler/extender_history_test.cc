// What the extender records in the decision history (history/): one record per filter of a GPU pod with
// every node's verdict, the preference and capacity request of a refused pod, the bind and the withdrawal,
// all on the pod's correlation id.

#include <catch2/catch.hpp>

#include "tests/decision/p4d_scale_up.h"
#include "tests/history/memory_recorder.h"
#include "tests/kube/builders.h"
#include "tests/scheduler/extender_fixture.h"

namespace topofit::scheduler {
namespace {

using history::Kind;
using history::Reason;
using kube::testing::MakeNode;
using kube::testing::MakePod;

std::vector<std::pair<Kind, Reason>> KindsAndReasons(const std::vector<history::Record>& records) {
  std::vector<std::pair<Kind, Reason>> out;
  for (const history::Record& r : records) out.emplace_back(r.kind, r.reason);
  return out;
}

TEST_CASE("the extender records a refused pod's chain, from filter to bind, on its uid", "[extender][history]") {
  testing::ExtenderFixture f;
  history::testing::MemoryRecorder recorder;
  f.extender.RecordDecisionsTo(&recorder);
  REQUIRE(f.state->UpsertNode(MakeNode().name("g5-1").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  const kube::Pod trainer = MakePod().name("trainer").gpus(8).annotation("topofit.io/min-link", "NV")
                                .annotation("topofit.io/topology-policy", "required");
  f.kube.PutPod(trainer);  // bind reads the pod it authorises from the API server
  REQUIRE(f.extender.Filter({trainer, std::nullopt, std::vector<std::string>{"g5-1"}}).ok());
  REQUIRE(f.state->UpsertNode(decision::testing::P4d("p4d-1", 0)).ok());
  REQUIRE(*f.extender.Filter({trainer, std::nullopt, std::vector<std::string>{"p4d-1"}})->node_names ==
          std::vector<std::string>{"p4d-1"});
  REQUIRE(*f.extender.Bind({"trainer", "default", "uid-trainer", "p4d-1"}) == "");

  const std::vector<history::Record> records = recorder.records();
  REQUIRE(records.size() == 6);
  CHECK(KindsAndReasons(records) == std::vector<std::pair<Kind, Reason>>{
                                        {Kind::kFilter, Reason::kNoNodeFits},
                                        {Kind::kCapacityRequested, Reason::kNoNodeFits},
                                        {Kind::kPreference, Reason::kNoNodeFits},
                                        {Kind::kFilter, Reason::kFits},
                                        {Kind::kCapacityWithdrawn, Reason::kBound},  // inside the bind
                                        {Kind::kBind, Reason::kBound}});
  for (const history::Record& r : records) {
    CHECK(r.correlation_id == "uid-trainer");
    CHECK(r.pods == std::vector<history::PodSubject>{{"uid-trainer", "default/trainer"}});
    CHECK(r.time == f.clock.Now());
  }
  // The refusal: g5's eight GPUs are PCIe-connected, the pod requires NVLink; the best 8-GPU set it had.
  REQUIRE(records[0].candidates.size() == 1);
  const history::Candidate& g5 = records[0].candidates[0];
  CHECK(g5.name == "g5-1");
  CHECK(g5.reason == Reason::kMinLink);
  CHECK(g5.unresolvable);
  REQUIRE(g5.topology.has_value());
  CHECK(g5.topology->gpu_ids == "0,1,2,3,4,5,6,7");
  CHECK(g5.topology->weakest_link != "NV");
  CHECK(records[0].gpus == 8);
  // The fit and the bind name the GPUs.
  REQUIRE(records[3].candidates.size() == 1);
  CHECK(records[3].candidates[0].reason == Reason::kFits);
  CHECK(records[3].candidates[0].topology->weakest_link == "NV");
  CHECK(records[5].node == "p4d-1");
  REQUIRE(records[5].candidates.size() == 1);
  CHECK(records[5].candidates[0].topology->gpu_ids == "0,1,2,3,4,5,6,7");
}

TEST_CASE("the extender records an unreadable GPU pod once and pods without GPUs not at all", "[extender][history]") {
  testing::ExtenderFixture f;
  history::testing::MemoryRecorder recorder;
  f.extender.RecordDecisionsTo(&recorder);
  REQUIRE(f.state->UpsertNode(MakeNode().name("n1").gpus(8)).ok());
  REQUIRE(f.extender.Filter({MakePod().name("web"), std::nullopt, std::vector<std::string>{"n1"}}).ok());
  CHECK(recorder.records().empty());
  const kube::Pod bad = MakePod().name("bad").gpus(2).annotation("topofit.io/min-link", "FAST");
  REQUIRE(f.extender.Filter({bad, std::nullopt, std::vector<std::string>{"n1"}}).ok());
  REQUIRE(recorder.records().size() == 1);
  CHECK(recorder.records()[0].reason == Reason::kInvalidPod);
  CHECK(recorder.records()[0].correlation_id == "uid-bad");
}

}  // namespace
}  // namespace topofit::scheduler
