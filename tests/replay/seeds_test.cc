#include "replay/seeds.h"

#include <catch2/catch.hpp>

#include "tests/kube/status_matchers.h"

namespace topofit::sim {
namespace {

TEST_CASE("ParseSeeds: seeds and ranges, in order", "[seeds]") {
  CHECK(*ParseSeeds("1-5") == std::vector<uint64_t>{1, 2, 3, 4, 5});
  CHECK(*ParseSeeds("7") == std::vector<uint64_t>{7});
  CHECK(*ParseSeeds("3, 1,9-10") == std::vector<uint64_t>{3, 1, 9, 10});
}

TEST_CASE("ParseSeeds refuses what is not a list of seeds", "[seeds]") {
  for (const char* text : {"", "5-1", "a", "1-", "-3", "1,,2", "1-2-3"}) {
    INFO(text);
    CHECK_STATUS(ParseSeeds(text), absl::StatusCode::kInvalidArgument, "want seeds and ranges");
  }
  CHECK_STATUS(ParseSeeds("1-3,2"), absl::StatusCode::kInvalidArgument, "seed 2 is listed twice");
  CHECK_STATUS(ParseSeeds("1-5000"), absl::StatusCode::kInvalidArgument, "more than 1000 seeds");
}

TEST_CASE("SpreadOf: the mean and the sample standard deviation, by hand", "[seeds]") {
  // {1, 2, 3}: mean 2; squares 1 + 0 + 1 = 2 over n - 1 = 2 -> sd 1.
  const Spread three = SpreadOf({1, 2, 3});
  CHECK(three.mean == 2);
  CHECK(three.sd == 1);
  // {10, 14}: mean 12; squares 4 + 4 = 8 over 1 -> sd sqrt(8) = 2.828.
  CHECK(SpreadOf({10, 14}).sd == Approx(2.8284271));
  CHECK(SpreadOf({5}).mean == 5);
  CHECK(SpreadOf({5}).sd == 0);
  CHECK(SpreadOf({}).mean == 0);
}

}  // namespace
}  // namespace topofit::sim
