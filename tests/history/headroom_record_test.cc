// Headroom records (issue 34): what `topofit headroom` records of a change of warm capacity survives the
// database and /decisions' JSON, and `topofit explain headroom` tells it.
#include <catch2/catch.hpp>

#include "history/explain.h"
#include "history/explain_query.h"
#include "history/record_json.h"
#include "history/store.h"
#include "tests/kube/status_matchers.h"

namespace topofit::history {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'750'000'000);

Record Changed(const std::string& shape, int gpus_per_pod, int was, int replicas, int seconds) {
  Record r;
  r.time = kT0 + absl::Seconds(seconds);
  r.component = Component::kHeadroom;
  r.kind = Kind::kHeadroom;
  r.reason = replicas > was ? Reason::kHeadroomGrew : Reason::kHeadroomShrank;
  r.gpus = replicas * gpus_per_pod;
  r.headroom = HeadroomDetail{.shape = shape,
                              .replicas = replicas,
                              .was = was,
                              .target = replicas,
                              .fill_rate = 0.8,
                              .boot_seconds = 600,
                              .rises = 60,
                              .largest_rise = 7,
                              .mechanism = "capacity-buffers"};
  return r;
}

TEST_CASE("a headroom record round-trips through the database and the JSON of GET /decisions", "[history][headroom]") {
  const Record record = Changed("topofit-headroom-4gpu-nv-required", 4, 0, 3, 0);
  CHECK(KindName(record.kind) == "headroom");
  CHECK(ComponentName(record.component) == "headroom");
  CHECK(ReasonName(record.reason) == "headroom-grew");
  CHECK(ParseReason("headroom-shrank").value() == Reason::kHeadroomShrank);
  CHECK(ParseKind("headroom").value() == Kind::kHeadroom);
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  REQUIRE_OK((*store)->Append({record}));
  auto page = (*store)->Query({.kind = Kind::kHeadroom});
  REQUIRE_OK(page);
  REQUIRE(page->records.size() == 1);
  Record expected = record;
  expected.id = 1;
  CHECK(page->records.front() == expected);
  CHECK(RecordFromJson(RecordToJson(expected)).value() == expected);
  CHECK(RecordToJson(expected)["headroom"]["largestRise"] == 7);
}

TEST_CASE("explain headroom tells what each shape holds now and every change with why", "[history][headroom]") {
  auto store = DecisionStore::Open("");
  REQUIRE_OK(store);
  REQUIRE_OK((*store)->Append({Changed("topofit-headroom-1gpu", 1, 0, 6, 0),
                               Changed("topofit-headroom-4gpu-nv-required", 4, 0, 2, 60),
                               Changed("topofit-headroom-1gpu", 1, 6, 4, 1800)}));
  const PageSource pages = [&](const DecisionQuery& q) { return (*store)->Query(q); };
  absl::StatusOr<Explanation> all = Explain(Subject::kHeadroom, "", 100, pages);
  REQUIRE_OK(all);
  CHECK(all->records.size() == 3);
  CHECK_THAT(all->text, Catch::StartsWith("warm capacity: 6 pod(s), 12 GPUs over 2 shape(s), as last changed\n"));
  CHECK_THAT(all->text, Catch::Contains("  topofit-headroom-1gpu: 4 since 2025-06-15T15:36:40.000000Z\n"));
  CHECK_THAT(all->text, Catch::Contains("CapacityBuffer topofit-headroom-1gpu: 6 -> 4 pod(s) kept warm (4 GPUs); its "
                                        "target stayed at 4 or below for the shrink delay"));
  CHECK_THAT(all->text, Catch::Contains("CapacityBuffer topofit-headroom-4gpu-nv-required: 0 -> 2 pod(s) kept warm (8 "
                                        "GPUs); serving 80% of the 60 one-minute rises over a 600 s boot needs 2"));
  absl::StatusOr<Explanation> one = Explain(Subject::kHeadroom, "topofit-headroom-4gpu-nv-required", 100, pages);
  REQUIRE_OK(one);
  REQUIRE(one->records.size() == 1);
  CHECK(ExplanationToJson(Subject::kHeadroom, "", *all)["decisions"].size() == 3);
  CHECK(Explain(Subject::kHeadroom, "topofit-headroom-8gpu", 100, pages)->records.empty());
}

}  // namespace
}  // namespace topofit::history
