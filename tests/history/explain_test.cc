#include "history/explain.h"

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "history/explain_query.h"
#include "history/from_decisions.h"

namespace topofit::history {
namespace {

Record Of(Kind kind, Reason reason, const std::string& uid, int seconds) {
  Record r;
  r.time = absl::FromUnixSeconds(1'750'000'000 + seconds);
  r.kind = kind;
  r.reason = reason;
  r.correlation_id = uid;
  r.pods = {{uid, "ml/train"}};
  r.gpus = 8;
  return r;
}

TEST_CASE("a pod's story is its newest uid's chain, newest first, timed from its first record", "[history]") {
  Record refused = Of(Kind::kFilter, Reason::kNoNodeFits, "uid-new", 0);
  Candidate g5;
  g5.name = "g5-1";
  g5.reason = Reason::kMinLink;
  g5.requested = static_cast<int64_t>(topology::LinkClass::kNvLink);
  g5.available = static_cast<int64_t>(topology::LinkClass::kSys);
  g5.topology = TopologyDetail{"0,1,2,3,4,5,6,7", "SYS", 12'000};
  refused.candidates = {g5};
  Record bound = Of(Kind::kBind, Reason::kBound, "uid-new", 330);
  bound.node = "p4d-new";
  bound.candidates = {Candidate{.name = "p4d-new", .topology = TopologyDetail{"0,1,2,3,4,5,6,7", "", 0}}};
  // Newest first, with an older pod of the same name (another uid) that must not be told.
  const std::vector<Record> records = {bound, refused, Of(Kind::kBind, Reason::kBound, "uid-old", -900)};

  CHECK(PodChain("ml/train", records).size() == 2);
  const std::string story = ExplainPod("ml/train", records);
  CHECK(story ==
        "ml/train bound to p4d-new 5m30s after topofit first judged it\n"
        "correlation id uid-new (2 decisions, newest first)\n"
        "  2025-06-15T15:12:10.000000Z  +5m30s  bound to p4d-new, GPUs 0,1,2,3,4,5,6,7\n"
        "  2025-06-15T15:06:40.000000Z  +0s  filter: every one of 1 nodes refused 8 GPUs: g5-1: needs links of NV or "
        "better, best reachable is SYS (best set: GPUs 0,1,2,3,4,5,6,7, weakest link SYS, 12 GB/s)\n");
  CHECK(ExplainPod("ml/other", records).empty());
}

NodeIdleGpus Idle(const std::string& node, uint32_t free_mask, std::initializer_list<std::pair<IdleReason, int>> counts) {
  NodeIdleGpus idle{.node = node, .node_group = "p5", .free = topology::GpuSet::FromMask(free_mask)};
  for (const auto& [reason, n] : counts) idle.counts[static_cast<size_t>(reason)] = n;
  return idle;
}

TEST_CASE("an idle record names its node's free GPUs by reason, most of them give the record's reason", "[history]") {
  const Record r = IdleRecord(absl::FromUnixSeconds(1'750'000'000),
                              Idle("h100-3", 0b01100110, {{IdleReason::kHeldForIntent, 1}, {IdleReason::kFragmented, 3}}));
  CHECK(r.kind == Kind::kIdle);
  CHECK(r.reason == Reason::kIdleFragmented);
  CHECK(r.node == "h100-3");
  CHECK(r.node_group == "p5");
  CHECK(r.gpus == 4);
  REQUIRE(r.candidates.size() == 2);
  CHECK(r.candidates[0].reason == Reason::kIdleHeldForIntent);
  CHECK(r.candidates[0].free_gpus == 1);
  CHECK(r.candidates[1].reason == Reason::kIdleFragmented);
  CHECK(r.candidates[1].topology->gpu_ids == "1,2,5,6");
  // Nothing free any more: all bound, no candidates.
  const Record busy = IdleRecord(absl::FromUnixSeconds(1'750'000'000), Idle("h100-3", 0, {}));
  CHECK(busy.reason == Reason::kBound);
  CHECK(busy.candidates.empty());
}

TEST_CASE("explain idle: each node's latest idle GPUs, or one node's over time", "[history]") {
  auto at = [](int s) { return absl::FromUnixSeconds(1'750'000'000 + s); };
  // Newest first, as GET /decisions pages them; h100-3 went from 4 fragmented to all busy, g5-2 empty.
  const std::vector<Record> records = {
      IdleRecord(at(30), Idle("g5-2", 0xff, {{IdleReason::kAwaitingScaleDown, 8}})),
      IdleRecord(at(20), Idle("h100-3", 0, {})),
      IdleRecord(at(10), Idle("h100-3", 0b01100110, {{IdleReason::kFragmented, 4}})),
      IdleRecord(at(5), Idle("a100-1", 0b11, {{IdleReason::kHeldForIntent, 2}})),
  };
  CHECK(ExplainIdle("", records) ==
        "10 idle GPUs on 2 node(s): 2 held-for-intent, 8 awaiting-scale-down\n"
        "  g5-2 (p5): 8 free GPUs (0,1,2,3,4,5,6,7): 8 awaiting-scale-down since 2025-06-15T15:07:10.000000Z\n"
        "  a100-1 (p5): 2 free GPUs (0,1): 2 held-for-intent since 2025-06-15T15:06:45.000000Z\n");
  CHECK(ExplainIdle("h100-3", records) ==
        "node h100-3 (p5): no free GPUs since 2025-06-15T15:07:00.000000Z\n"
        "2 change(s), newest first\n"
        "  2025-06-15T15:07:00.000000Z  +10s  node h100-3 (p5): no free GPUs\n"
        "  2025-06-15T15:06:50.000000Z  +0s  node h100-3 (p5): 4 free GPUs (1,2,5,6): 4 fragmented\n");
  CHECK(ExplainIdle("nowhere", records).empty());
  CHECK(ExplainIdle("", {}).empty());
}

TEST_CASE("a pod's story is told in time order though two writers stored its records out of it", "[history]") {
  // Ids are write order: the expander's writer stored its ranking (t=5 s) after the extender's fit (t=8 s).
  Record refused = Of(Kind::kFilter, Reason::kNoNodeFits, "uid-a", 0);
  refused.id = 1;
  Record fits = Of(Kind::kFilter, Reason::kFits, "uid-a", 8);
  fits.id = 2;
  fits.candidates = {Candidate{.name = "p4d-1"}};
  Record ranking = Of(Kind::kRanking, Reason::kChosen, "uid-a", 5);
  ranking.id = 3;
  const PageSource source = [&](const DecisionQuery&) -> absl::StatusOr<DecisionPage> {
    return DecisionPage{{ranking, fits, refused}, 0};
  };
  absl::StatusOr<Explanation> told = Explain(Subject::kPod, "ml/train", 100, source);
  REQUIRE(told.ok());
  std::vector<int64_t> ids;
  for (const Record& r : told->records) ids.push_back(r.id);
  CHECK(ids == std::vector<int64_t>{2, 3, 1});
  CHECK(told->text.find("filter: 1 of 1 nodes fit") < told->text.find("expander ranked"));
  CHECK(told->text.find("expander ranked") < told->text.find("filter: every one of"));
}

TEST_CASE("explain group: its rankings first, however many newer records its nodes have", "[history]") {
  auto at = [](int s) { return absl::FromUnixSeconds(1'750'000'000 + s); };
  Record chose = Of(Kind::kRanking, Reason::kChosen, "", 0);
  chose.id = 1;
  chose.node_group = "p4d";
  Record passed_over = Of(Kind::kRanking, Reason::kChosen, "", 10);
  passed_over.id = 2;
  passed_over.node_group = "g5";
  passed_over.candidates = {Candidate{.name = "g5", .reason = Reason::kChosen},
                            Candidate{.name = "p4d", .reason = Reason::kHigherCostPerUsefulGpu}};
  std::vector<Record> newest_first;
  for (int i = 4; i >= 0; --i) {
    newest_first.push_back(IdleRecord(at(20 + i), Idle(absl::StrCat("p4d-", i), 0xff, {{IdleReason::kNoDemand, 8}})));
    newest_first.back().id = 3 + i;
    newest_first.back().node_group = "p4d";
  }
  newest_first.push_back(passed_over);
  newest_first.push_back(chose);
  // The store's answer to a group query: every record above is about p4d; a kind narrows it.
  const PageSource source = [&](const DecisionQuery& q) -> absl::StatusOr<DecisionPage> {
    DecisionPage page;
    for (const Record& r : newest_first) {
      if ((!q.kind || r.kind == *q.kind) && static_cast<int>(page.records.size()) < q.limit) page.records.push_back(r);
    }
    return page;
  };
  absl::StatusOr<Explanation> told = Explain(Subject::kGroup, "p4d", 3, source);
  REQUIRE(told.ok());
  std::vector<int64_t> ids;
  for (const Record& r : told->records) ids.push_back(r.id);
  CHECK(ids == std::vector<int64_t>{2, 1, 7, 6, 5});  // both rankings, then the newest three others
  CHECK_THAT(told->text, Catch::StartsWith("node group p4d: chosen by 1 ranking(s), passed over by 1\nrankings, newest first:\n"));
  CHECK(told->text.find("other decisions about it, newest first:\n") > told->text.find("expander ranked"));
}

TEST_CASE("a replay's records are dated by the time since the replay began, not by 1970", "[history]") {
  Record refused = Of(Kind::kFilter, Reason::kNoNodeFits, "uid-a", 0);
  refused.time = absl::UnixEpoch() + absl::Hours(5) + absl::Seconds(30);
  refused.candidates = {Candidate{.name = "p4d-1", .reason = Reason::kHeldForScaleUp, .unresolvable = true,
                                  .free_gpus = 8, .held_gpus = 8,
                                  .held_until = absl::UnixEpoch() + absl::Hours(5) + absl::Minutes(10)}};
  const PageSource source = [&](const DecisionQuery&) -> absl::StatusOr<DecisionPage> {
    return DecisionPage{.records = {refused}, .clock = RecordClock::kReplay};
  };
  absl::StatusOr<Explanation> told = Explain(Subject::kPod, "ml/train", 10, source);
  REQUIRE(told.ok());
  CHECK(told->clock == RecordClock::kReplay);
  CHECK_THAT(told->text, Catch::Contains("  replay +5h30s  +0s  filter: every one of 1 nodes refused 8 GPUs: p4d-1: 8 of "
                                         "the node's 8 free GPUs are held for the pods a scale-up brought it for; this "
                                         "pod is held back until replay +5h10m\n"));
  CHECK(told->text.find("1970") == std::string::npos);
  CHECK(ExplanationToJson(Subject::kPod, "ml/train", *told)["decisions"][0]["text"].get<std::string>().find("1970") ==
        std::string::npos);
  CHECK(ExplanationToJson(Subject::kPod, "ml/train", *told)["decisions"][0]["time"] == "1970-01-01T05:00:30.000000Z");
  CHECK(ExplanationToJson(Subject::kPod, "ml/train", *told)["clock"] == "replay");
}

}  // namespace
}  // namespace topofit::history
