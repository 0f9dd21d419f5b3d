#include "decision/gang_book.h"

#include <catch2/catch.hpp>

namespace topofit::decision {
namespace {

using topology::GpuSet;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

// Three places: two on node a (GPUs 0-1 and 2-3), one on node b (GPUs 0-1).
GangPlacement ThreePlaces() {
  return GangPlacement{.level = GangLevel::kDomain,
                       .domain = NvlinkDomain{"nvidia.com/gpu.clique", {"c.1"}},
                       .slots = {{"a", GpuSet::FromMask(0b0011)}, {"a", GpuSet::FromMask(0b1100)}, {"b", GpuSet::FromMask(0b0011)}},
                       .nodes_used = 2};
}

const auto kAnyNode = [](absl::string_view) { return true; };

TEST_CASE("GangBook: members join places, bind only together, and the gang lands", "[gang_book]") {
  GangBook book;
  REQUIRE(book.Reserve("topofit:ml/t", ThreePlaces(), kNow).ok());
  CHECK(absl::IsFailedPrecondition(book.Reserve("topofit:ml/t", ThreePlaces(), kNow)));
  // reserved GPUs are held from every other pod and gang, not from the gang itself
  CHECK(book.ReservedOn("a") == GpuSet::FromMask(0b1111));
  CHECK(book.ReservedOn("a", "topofit:ml/t").empty());
  CHECK(book.ReservedOn("elsewhere").empty());

  const std::optional<GangSlot> first = book.Join("topofit:ml/t", "uid-1", kAnyNode, kNow);
  REQUIRE(first.has_value());
  CHECK(first->node == "a");
  CHECK(first->gpus == GpuSet::FromMask(0b0011));
  // joining again gives the same place
  CHECK(book.Join("topofit:ml/t", "uid-1", kAnyNode, kNow) == first);
  // a member whose offered nodes exclude a takes the place on b
  const std::optional<GangSlot> on_b =
      book.Join("topofit:ml/t", "uid-2", [](absl::string_view node) { return node == "b"; }, kNow);
  REQUIRE(on_b.has_value());
  CHECK(on_b->node == "b");
  CHECK_FALSE(book.Find("topofit:ml/t")->complete());
  CHECK(book.Find("topofit:ml/t")->expires_at == kNow + absl::Minutes(2));

  const std::optional<GangSlot> last = book.Join("topofit:ml/t", "uid-3", kAnyNode, kNow + absl::Seconds(30));
  REQUIRE(last.has_value());
  CHECK(last->gpus == GpuSet::FromMask(0b1100));
  CHECK(book.Find("topofit:ml/t")->complete());
  CHECK(book.Find("topofit:ml/t")->expires_at == kNow + absl::Seconds(90));  // the bind grace from the last join
  // a fourth pod finds no open place
  CHECK_FALSE(book.Join("topofit:ml/t", "uid-4", kAnyNode, kNow).has_value());

  book.Bound("uid-1");
  CHECK(book.ReservedOn("a") == GpuSet::FromMask(0b1100));  // a bound member's GPUs are its own now
  book.Bound("uid-2");
  CHECK_FALSE(book.Landed("topofit:ml/t"));
  book.Bound("uid-3");
  CHECK(book.Landed("topofit:ml/t"));
  CHECK(book.Find("topofit:ml/t") == nullptr);
  CHECK(book.ReservedOn("a").empty());
  CHECK_FALSE(book.SlotOf("uid-1").has_value());
}

TEST_CASE("GangBook: a reservation its members never complete frees its GPUs at the bound", "[gang_book]") {
  GangBook book(GangBookOptions{.wait = absl::Seconds(60), .bind_grace = absl::Seconds(10), .max_reservations = 4,
                                .landed_remembered = 4});
  REQUIRE(book.Reserve("g", ThreePlaces(), kNow).ok());
  REQUIRE(book.Join("g", "uid-1", kAnyNode, kNow).has_value());
  CHECK(book.Expire(kNow + absl::Seconds(59)).empty());
  const std::vector<GangReservation> expired = book.Expire(kNow + absl::Seconds(60));
  REQUIRE(expired.size() == 1);
  CHECK(expired.front().gang == "g");
  CHECK(expired.front().joined() == 1);
  CHECK(book.size() == 0);
  CHECK(book.ReservedOn("a").empty());
  CHECK_FALSE(book.SlotOf("uid-1").has_value());
  CHECK_FALSE(book.Landed("g"));
}

TEST_CASE("GangBook: a member that leaves opens its place, a cancelled gang frees all", "[gang_book]") {
  GangBook book;
  REQUIRE(book.Reserve("g", ThreePlaces(), kNow).ok());
  REQUIRE(book.Join("g", "uid-1", kAnyNode, kNow).has_value());
  book.Left("uid-1");
  CHECK(book.Find("g")->joined() == 0);
  const std::optional<GangSlot> replacement = book.Join("g", "uid-9", kAnyNode, kNow);
  REQUIRE(replacement.has_value());
  CHECK(replacement->gpus == GpuSet::FromMask(0b0011));
  book.Cancel("g");
  CHECK(book.size() == 0);
  CHECK(book.ReservedOn("b").empty());
  CHECK_FALSE(book.SlotOf("uid-9").has_value());
}

TEST_CASE("GangBook refuses reservations beyond its bound and remembers a bounded number of landed gangs", "[gang_book]") {
  GangBook book(GangBookOptions{.wait = absl::Seconds(60), .bind_grace = absl::Seconds(10), .max_reservations = 1,
                                .landed_remembered = 1});
  GangPlacement one{.level = std::nullopt, .domain = std::nullopt, .slots = {{"a", GpuSet::FromMask(1)}}, .nodes_used = 1};
  REQUIRE(book.Reserve("g1", one, kNow).ok());
  CHECK(absl::IsResourceExhausted(book.Reserve("g2", one, kNow)));
  REQUIRE(book.Join("g1", "p1", kAnyNode, kNow).has_value());
  book.Bound("p1");
  REQUIRE(book.Reserve("g2", one, kNow).ok());
  REQUIRE(book.Join("g2", "p2", kAnyNode, kNow).has_value());
  book.Bound("p2");
  CHECK(book.Landed("g2"));
  CHECK_FALSE(book.Landed("g1"));  // forgotten: only one is remembered
}

}  // namespace
}  // namespace topofit::decision
