#include "history/record.h"

#include <set>

#include <catch2/catch.hpp>

#include "history/record_json.h"
#include "tests/kube/status_matchers.h"

namespace topofit::history {
namespace {

TEST_CASE("every reason code has one name that parses back, refusals keep the filter's codes", "[history]") {
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(Reason::kIdleNoDemand); ++i) {
    const Reason reason = static_cast<Reason>(i);
    const std::string name(ReasonName(reason));
    CHECK_FALSE(name.empty());
    CHECK(names.insert(name).second);
    CHECK(*ParseReason(name) == reason);
  }
  for (decision::Refusal refusal : {decision::Refusal::kNodeSize, decision::Refusal::kGpuCount,
                                    decision::Refusal::kMinLink, decision::Refusal::kMinBandwidth,
                                    decision::Refusal::kHeldForScaleUp, decision::Refusal::kWaitingForCapacity,
                                    decision::Refusal::kAskingForCapacity}) {
    CHECK(ReasonName(ReasonOf(refusal)) == decision::RefusalCode(refusal));
  }
  CHECK(ReasonOf(decision::Refusal::kNone) == Reason::kFits);
  for (size_t i = 0; i < kIdleReasons; ++i) {
    CHECK(ReasonName(ReasonOfIdle(static_cast<IdleReason>(i))) == IdleReasonName(static_cast<IdleReason>(i)));
  }
  CHECK(*ParseKind("idle") == Kind::kIdle);
  CHECK_STATUS(ParseReason("because"), absl::StatusCode::kInvalidArgument, "unknown reason code 'because'");
  CHECK_STATUS(ParseKind("guess"), absl::StatusCode::kInvalidArgument, "unknown decision kind");
  for (int i = 0; i <= static_cast<int>(Kind::kAllocation); ++i) {
    CHECK(*ParseKind(KindName(static_cast<Kind>(i))) == static_cast<Kind>(i));
  }
  for (int i = 0; i <= static_cast<int>(Component::kAgent); ++i) {
    CHECK(*ParseComponent(ComponentName(static_cast<Component>(i))) == static_cast<Component>(i));
  }
}

TEST_CASE("a record survives JSON both ways, and bad JSON is refused by field", "[history]") {
  Record r;
  r.id = 42;
  r.time = absl::FromUnixMicros(1'750'000'000'123'456);
  r.component = Component::kExpander;
  r.kind = Kind::kRanking;
  r.reason = Reason::kChosen;
  r.pods = {{"u1", "ml/a"}, {"u2", "ml/b"}};
  r.node_group = "p5-a";
  r.gpus = 16;
  r.repeats = 2;
  Candidate lost;
  lost.name = "g5";
  lost.reason = Reason::kGroupWouldStrand;
  lost.idle_gpus = 3;
  lost.price = 16.25;
  lost.topology = TopologyDetail{"0,1", "PHB", 24'000};
  r.candidates = {Candidate{.name = "p5-a", .reason = Reason::kChosen, .quality_per_mille = 1000}, lost};
  const nlohmann::json json = RecordToJson(r);
  CHECK(json["time"] == "2025-06-15T15:06:40.123456Z");
  CHECK(json["candidates"][1]["reason"] == "group-would-strand");
  CHECK(json["repeats"] == 2);
  auto back = RecordFromJson(json);
  REQUIRE_OK(back);
  CHECK(*back == r);

  nlohmann::json wrong = json;
  wrong["gpus"] = "many";
  CHECK_STATUS(RecordFromJson(wrong), absl::StatusCode::kInvalidArgument, "'gpus' has the wrong type");
  wrong = json;
  wrong["candidates"][0]["reason"] = "luck";
  CHECK_STATUS(RecordFromJson(wrong), absl::StatusCode::kInvalidArgument, "'luck'");
  wrong = json;
  wrong["time"] = "yesterday";
  CHECK_STATUS(RecordFromJson(wrong), absl::StatusCode::kInvalidArgument, "RFC 3339");
  wrong = json;
  wrong["candidates"][0]["heldUntil"] = 600;
  CHECK_STATUS(RecordFromJson(wrong), absl::StatusCode::kInvalidArgument, "'heldUntil' is not a string");
  wrong["candidates"][0]["heldUntil"] = "in ten minutes";
  CHECK_STATUS(RecordFromJson(wrong), absl::StatusCode::kInvalidArgument, "RFC 3339");
}

}  // namespace
}  // namespace topofit::history
