#include "history/refusal_aggregator.h"

#include <catch2/catch.hpp>

#include "history/from_decisions.h"

namespace topofit::history {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'750'000'000);

// A filter record of pod `uid` at `seconds` past kStart: refused by g5-1 for min-link (`link` the best it
// reaches), or fitting when `fits`.
Record Filter(const std::string& uid, int seconds, int64_t link = 4, bool fits = false) {
  Candidate node{.name = "g5-1", .reason = fits ? Reason::kFits : Reason::kMinLink, .requested = 1, .available = link};
  return FilterRecord(kStart + absl::Seconds(seconds), {uid, "ml/" + uid}, 8, {node});
}

// Keep() over `records` in order: which were kept, and the repeats each kept one carries (-1: folded).
std::vector<int64_t> Kept(RefusalAggregator& aggregator, std::vector<Record> records) {
  std::vector<int64_t> out;
  for (Record& r : records) out.push_back(aggregator.Keep(r) ? r.repeats : -1);
  return out;
}

TEST_CASE("a pod's identical refusals within the window are folded into the next record kept", "[history]") {
  RefusalAggregator aggregator(absl::Minutes(1));
  // Retries at 0, 10, 20 s fold into the first; at 60 s the window has passed: kept, carrying the two.
  // Then 70 s folds again, and a different verdict at 75 s is kept at once with that one.
  CHECK(Kept(aggregator, {Filter("a", 0), Filter("a", 10), Filter("a", 20), Filter("a", 60), Filter("a", 70),
                          Filter("a", 75, /*link=*/3)}) == std::vector<int64_t>{0, -1, -1, 2, -1, 1});
}

TEST_CASE("refusals of different pods, and a filter that fits, are never folded", "[history]") {
  RefusalAggregator aggregator(absl::Minutes(1));
  CHECK(Kept(aggregator, {Filter("a", 0), Filter("b", 1), Filter("a", 2), Filter("b", 3)}) ==
        std::vector<int64_t>{0, 0, -1, -1});
  // The pod fits (after its two folded retries), then fits again: each is recorded.
  CHECK(Kept(aggregator, {Filter("a", 4, 4, true), Filter("a", 5, 4, true), Filter("a", 6)}) ==
        std::vector<int64_t>{1, 0, 0});
}

TEST_CASE("the aggregator forgets the oldest pods past its bound, and then records them again", "[history]") {
  RefusalAggregator aggregator(absl::Minutes(1), /*max_pods=*/2);
  CHECK(Kept(aggregator, {Filter("a", 0), Filter("b", 1), Filter("c", 2)}) == std::vector<int64_t>{0, 0, 0});
  // "a" was forgotten when "c" came: its retry is recorded as a first refusal; "c" is remembered.
  CHECK(Kept(aggregator, {Filter("a", 3), Filter("c", 4)}) == std::vector<int64_t>{0, -1});
}

}  // namespace
}  // namespace topofit::history
