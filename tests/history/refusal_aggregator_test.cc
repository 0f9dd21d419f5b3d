#include "history/refusal_aggregator.h"

#include <functional>
#include <utility>

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

TEST_CASE("a refusal that differs from the pod's last in any one field is recorded, not folded", "[history]") {
  // The pod's last refusal: a node with every field set, and one without a best set.
  const Candidate every{.name = "g5-1", .reason = Reason::kMinLink, .unresolvable = true, .requested = 1,
                        .available = 4, .free_gpus = 8, .held_gpus = 2, .held_until = kStart + absl::Minutes(10),
                        .topology = TopologyDetail{"0,1,2,3", "SYS", 12'000}, .preferences_satisfied = 3,
                        .quality_per_mille = 875, .idle_gpus = 1, .price = 16.25, .count = 2};
  const Candidate bare{.name = "g5-2", .reason = Reason::kGpuCount, .requested = 8, .available = 2};
  const Record last = FilterRecord(kStart, {"a", "ml/a"}, 8, {every, bare});
  REQUIRE(last.reason == Reason::kNoNodeFits);
  const std::vector<std::pair<const char*, std::function<void(Record&)>>> changes = {
      {"the record's reason", [](Record& r) { r.reason = Reason::kInvalidPod; }},
      {"the GPUs asked", [](Record& r) { r.gpus = 4; }},
      {"a node's name", [](Record& r) { r.candidates[0].name = "g5-3"; }},
      {"a node's refusal", [](Record& r) { r.candidates[0].reason = Reason::kMinBandwidth; }},
      {"unresolvable", [](Record& r) { r.candidates[0].unresolvable = false; }},
      {"requested", [](Record& r) { r.candidates[0].requested = 2; }},
      {"available", [](Record& r) { r.candidates[0].available = 3; }},
      {"requested and available swapped", [](Record& r) { std::swap(r.candidates[0].requested, r.candidates[0].available); }},
      {"free GPUs", [](Record& r) { r.candidates[0].free_gpus = 7; }},
      {"held GPUs", [](Record& r) { r.candidates[0].held_gpus = 1; }},
      {"held until", [](Record& r) { *r.candidates[0].held_until += absl::Seconds(1); }},
      {"no held until", [](Record& r) { r.candidates[0].held_until.reset(); }},
      {"preferences satisfied", [](Record& r) { r.candidates[0].preferences_satisfied = 2; }},
      {"quality", [](Record& r) { r.candidates[0].quality_per_mille = 874; }},
      {"idle GPUs", [](Record& r) { r.candidates[0].idle_gpus = 0; }},
      {"price", [](Record& r) { r.candidates[0].price = 16.5; }},
      {"count", [](Record& r) { r.candidates[0].count = 3; }},
      {"the best set's GPUs", [](Record& r) { r.candidates[0].topology->gpu_ids = "4,5,6,7"; }},
      {"the best set's weakest link", [](Record& r) { r.candidates[0].topology->weakest_link = "PHB"; }},
      {"the best set's bandwidth", [](Record& r) { r.candidates[0].topology->bandwidth_mbps = 24'000; }},
      {"no best set", [](Record& r) { r.candidates[0].topology.reset(); }},
      {"an empty best set where there was none", [](Record& r) { r.candidates[1].topology = TopologyDetail{}; }},
      {"a node more", [](Record& r) { r.candidates.push_back({.name = "g5-4", .reason = Reason::kTopologyUnknown}); }},
      {"a node fewer", [](Record& r) { r.candidates.pop_back(); }},
      {"the nodes in another order", [](Record& r) { std::swap(r.candidates[0], r.candidates[1]); }},
  };
  for (const auto& [field, change] : changes) {
    DYNAMIC_SECTION(field) {
      RefusalAggregator aggregator(absl::Minutes(1));
      Record first = last, same = last, other = last;
      same.time += absl::Seconds(10);
      other.time += absl::Seconds(20);
      change(other);
      REQUIRE(other != same);
      CHECK(Kept(aggregator, {first, same, other}) == std::vector<int64_t>{0, -1, 1});
    }
  }
}

TEST_CASE("the aggregator forgets the oldest pods past its bound, and then records them again", "[history]") {
  RefusalAggregator aggregator(absl::Minutes(1), /*max_pods=*/2);
  CHECK(Kept(aggregator, {Filter("a", 0), Filter("b", 1), Filter("c", 2)}) == std::vector<int64_t>{0, 0, 0});
  // "a" was forgotten when "c" came: its retry is recorded as a first refusal; "c" is remembered.
  CHECK(Kept(aggregator, {Filter("a", 3), Filter("c", 4)}) == std::vector<int64_t>{0, -1});
}

}  // namespace
}  // namespace topofit::history
