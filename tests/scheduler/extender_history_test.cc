// What the extender records in the decision history (history/): one record per filter of a GPU pod with
// every refused node's verdict and the nodes that fit counted, the preference and capacity request of a
// refused pod (once per window while its retries are refused alike), the bind and the withdrawal, all on
// the pod's correlation id.

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

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

// Eight PCIe-connected GPUs, and a pod that requires eight on NVLink: g5 refuses it.
kube::Node G5() { return MakeNode().name("g5-1").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8); }
kube::Pod NvLinkTrainer() {
  return MakePod().name("trainer").gpus(8).annotation("topofit.io/min-link", "NV").annotation("topofit.io/topology-policy", "required");
}

// An extender whose decisions go to `recorder`.
struct RecordingExtender : testing::ExtenderFixture {
  RecordingExtender() { extender.RecordDecisionsTo(&recorder); }
  history::testing::MemoryRecorder recorder;
};

// The extender knows g5-1, which refuses `trainer`.
struct G5RefusesTrainer : RecordingExtender {
  G5RefusesTrainer() { REQUIRE(state->UpsertNode(G5()).ok()); }
  const kube::Pod trainer = NvLinkTrainer();
};

TEST_CASE("the extender records a refused pod's chain, from filter to bind, on its uid", "[extender][history]") {
  G5RefusesTrainer f;
  f.kube.PutPod(f.trainer);  // bind reads the pod it authorises from the API server
  REQUIRE(f.extender.Filter({f.trainer, std::nullopt, std::vector<std::string>{"g5-1"}}).ok());
  REQUIRE(f.state->UpsertNode(decision::testing::P4d("p4d-1", 0)).ok());
  REQUIRE(*f.extender.Filter({f.trainer, std::nullopt, std::vector<std::string>{"p4d-1"}})->node_names ==
          std::vector<std::string>{"p4d-1"});
  REQUIRE(*f.extender.Bind({"trainer", "default", "uid-trainer", "p4d-1"}) == "");

  const std::vector<history::Record> records = f.recorder.records();
  REQUIRE(records.size() == 6);
  CHECK(KindsAndReasons(records) == std::vector<std::pair<Kind, Reason>>{
                                        {Kind::kFilter, Reason::kNoNodeFits},
                                        {Kind::kPreference, Reason::kNoNodeFits},
                                        {Kind::kCapacityRequested, Reason::kNoNodeFits},
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
  RecordingExtender f;
  REQUIRE(f.state->UpsertNode(MakeNode().name("n1").gpus(8)).ok());
  REQUIRE(f.extender.Filter({MakePod().name("web"), std::nullopt, std::vector<std::string>{"n1"}}).ok());
  CHECK(f.recorder.records().empty());
  const kube::Pod bad = MakePod().name("bad").gpus(2).annotation("topofit.io/min-link", "FAST");
  REQUIRE(f.extender.Filter({bad, std::nullopt, std::vector<std::string>{"n1"}}).ok());
  REQUIRE(f.recorder.records().size() == 1);
  CHECK(f.recorder.records()[0].reason == Reason::kInvalidPod);
  CHECK(f.recorder.records()[0].correlation_id == "uid-bad");
}

TEST_CASE("a filter of a pod most nodes fit records those nodes as one candidate with their count", "[extender][history]") {
  RecordingExtender f;
  std::vector<std::string> names;
  for (int i = 0; i < 5; ++i) {
    names.push_back(absl::StrCat("n", i));
    REQUIRE(f.state->UpsertNode(MakeNode().name(names.back()).gpus(i < 3 ? 8 : 1)).ok());
  }
  absl::StatusOr<codec::ExtenderFilterResult> result = f.extender.Filter({MakePod().name("trainer").gpus(2), std::nullopt, names});
  REQUIRE(result.ok());
  REQUIRE(result->node_names.has_value());
  CHECK(result->node_names->size() == 3);
  REQUIRE(f.recorder.records().size() == 1);
  const history::Record r = f.recorder.records()[0];
  REQUIRE(r.candidates.size() == 3);  // n0 for n0..n2, then n3 and n4 refused
  CHECK(r.candidates[0].name == "n0");
  CHECK(r.candidates[0].count == 3);
  CHECK(r.candidates[1].reason == Reason::kNodeSize);
  CHECK(r.candidates[2].name == "n4");
}

TEST_CASE("a pod's retries refused alike are recorded once a minute, with how often they repeated", "[extender][history]") {
  G5RefusesTrainer f;
  const codec::ExtenderArgs args{f.trainer, std::nullopt, std::vector<std::string>{"g5-1"}};
  for (int retry = 0; retry < 4; ++retry) {  // kube-scheduler's backoff: every 10 s
    REQUIRE(f.extender.Filter(args)->failed_and_unresolvable_nodes.size() == 1);
    f.clock.Advance(absl::Seconds(10));
  }
  // The first refusal's filter, preference and capacity request; the three retries only counted.
  CHECK(KindsAndReasons(f.recorder.records()) == std::vector<std::pair<Kind, Reason>>{
                                                   {Kind::kFilter, Reason::kNoNodeFits},
                                                   {Kind::kPreference, Reason::kNoNodeFits},
                                                   {Kind::kCapacityRequested, Reason::kNoNodeFits}});
  CHECK(f.ledger->PreferenceCount() == 1);  // the ledger still heard every retry

  f.clock.Advance(absl::Seconds(20));  // a minute after the first: recorded again, with the three
  REQUIRE(f.extender.Filter(args).ok());
  const std::vector<history::Record> records = f.recorder.records();
  REQUIRE(records.size() == 6);
  CHECK(records[3].kind == Kind::kFilter);
  CHECK(records[3].repeats == 3);
  CHECK(records[3].candidates == records[0].candidates);
}

}  // namespace
}  // namespace topofit::scheduler
