// Restart records (issue 35): what the restart collector writes survives the database and /decisions' JSON,
// and `topofit explain restart` and the pod's Event tell it.
#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "history/explain.h"
#include "history/explain_query.h"
#include "history/from_decisions.h"
#include "history/pod_events.h"
#include "history/record_json.h"
#include "history/store.h"
#include "tests/kube/status_matchers.h"

namespace topofit::history {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'750'000'000);

Record Restarted(int restart_count, decision::RestartCause cause, const std::string& diagnosis, int seconds) {
  RestartDetail detail;
  detail.container = "train";
  detail.restart_count = restart_count;
  detail.exit_code = 137;
  detail.signal = 9;
  detail.termination_reason = "OOMKilled";
  detail.waiting_reason = "CrashLoopBackOff";
  detail.diagnosis = diagnosis;
  detail.warnings = {"BackOff: Back-off restarting failed container train"};
  detail.log_tail = "epoch 3\nallocating batch\n";
  detail.gpu_ids = "0,1";
  detail.xids = {31};
  return RestartRecord(kT0 + absl::Seconds(seconds), {"uid-trainer", "ml/trainer"}, "gpu-1", 2, cause, detail);
}

TEST_CASE("a restart record round-trips through the database and the JSON of GET /decisions", "[history][restarts]") {
  const Record record = Restarted(3, decision::RestartCause::kOutOfMemory, "out of memory: container train ...", 0);
  CHECK(ReasonName(record.reason) == "oom");
  CHECK(KindName(record.kind) == "restart");
  CHECK(ComponentName(record.component) == "restarts");
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  REQUIRE_OK((*store)->Append({record}));
  auto page = (*store)->Query({.pod = "ml/trainer", .kind = Kind::kRestart});
  REQUIRE_OK(page);
  REQUIRE(page->records.size() == 1);
  Record expected = record;
  expected.id = 1;
  CHECK(page->records.front() == expected);
  CHECK(RecordFromJson(RecordToJson(expected)).value() == expected);
  for (int cause = 0; cause <= static_cast<int>(decision::RestartCause::kUnknown); ++cause) {
    const Reason reason = ReasonOfRestart(static_cast<decision::RestartCause>(cause));
    CHECK(ParseReason(ReasonName(reason)).value() == reason);
  }
}

TEST_CASE("explain restart tells the newest restart in full, the older ones a line each, and the bind", "[history][restarts]") {
  const std::vector<Record> restarts = {
      Restarted(2, decision::RestartCause::kOutOfMemory, "out of memory: container train exceeded its memory limit", 60),
      Restarted(1, decision::RestartCause::kApplicationError, "application error: container train ended with exit code 1", 0)};
  Record bound = BindRecord(kT0 - absl::Minutes(5), {"uid-trainer", "ml/trainer"}, "gpu-1", 2, "0,1", true);
  const std::string told = ExplainRestarts("ml/trainer", restarts, &bound);
  CHECK_THAT(told, Catch::StartsWith("ml/trainer: 2 restart(s) recorded; the newest, at 2025-06-15T15:07:40.000000Z, is oom\n"));
  CHECK_THAT(told, Catch::Contains("  why: out of memory: container train exceeded its memory limit\n"));
  CHECK_THAT(told, Catch::Contains("container train: restart 2, last ended with exit code 137, signal 9 (OOMKilled); now CrashLoopBackOff"));
  CHECK_THAT(told, Catch::Contains("  GPUs: 0,1 on gpu-1; Xid 31\n"));
  CHECK_THAT(told, Catch::Contains("  warning event: BackOff: Back-off restarting failed container train\n"));
  CHECK_THAT(told, Catch::Contains("    | epoch 3\n    | allocating batch\n"));
  CHECK_THAT(told, Catch::Contains("  placed by topofit: bound to gpu-1"));
  CHECK_THAT(told, Catch::Contains("earlier restarts, newest first:\n  2025-06-15T15:06:40.000000Z  container train restarted "
                                   "(restart 1) on gpu-1: application error"));
  CHECK_THAT(ExplainRestarts("ml/trainer", restarts, nullptr), Catch::Contains("placed by topofit: no bind recorded"));
  CHECK(ExplainRestarts("ml/trainer", {}, nullptr).empty());
}

TEST_CASE("explain restart reads the pod's restarts and its bind from the decision pages", "[history][restarts]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  REQUIRE_OK((*store)->Append({BindRecord(kT0 - absl::Minutes(5), {"uid-trainer", "ml/trainer"}, "gpu-1", 2, "0,1", true),
                               Restarted(1, decision::RestartCause::kGpuFault, "GPU fault: Xid 79", 0)}));
  const PageSource pages = [&](const DecisionQuery& q) { return (*store)->Query(q); };
  absl::StatusOr<Explanation> told = Explain(Subject::kRestart, "ml/trainer", 100, pages);
  REQUIRE_OK(told);
  REQUIRE(told->records.size() == 2);
  CHECK(told->records[0].kind == Kind::kRestart);
  CHECK(told->records[1].kind == Kind::kBind);
  CHECK(told->correlation_id == "uid-trainer");
  CHECK_THAT(told->text, Catch::Contains("is gpu-fault"));
  CHECK_THAT(told->text, Catch::Contains("placed by topofit: bound to gpu-1"));
  CHECK(ExplanationToJson(Subject::kRestart, "ml/trainer", *told)["restart"] == "ml/trainer");
  CHECK(Explain(Subject::kRestart, "ml/nobody", 100, pages)->records.empty());
}

TEST_CASE("a restart record becomes a Warning Event on its pod", "[history][restarts]") {
  const std::vector<PodEvent> events =
      PodEventsOf(Restarted(1, decision::RestartCause::kGpuFault, "GPU fault: Xid 79 (GPU has fallen off the bus)", 0));
  REQUIRE(events.size() == 1);
  CHECK(events[0].kind == PodEventKind::kRestartDiagnosed);
  CHECK(IsWarning(events[0].kind));
  CHECK(PodEventReason(events[0].kind) == "RestartDiagnosed");
  CHECK(events[0].name == "trainer");
  CHECK_THAT(events[0].note, Catch::Contains("GPU fault: Xid 79"));
}

}  // namespace
}  // namespace topofit::history
