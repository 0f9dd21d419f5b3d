#include "topology/gpu_set.h"

#include <catch2/catch.hpp>

namespace topofit::topology {
namespace {

TEST_CASE("GpuSet parses and prints the gpu-ids form", "[gpu_set]") {
  absl::StatusOr<GpuSet> set = GpuSet::Parse(" 4,0, 1", 8);
  REQUIRE(set.ok());
  CHECK(set->ToString() == "0,1,4");
  CHECK(set->size() == 3);
  CHECK(set->contains(GpuId{4}));
  CHECK_FALSE(set->contains(GpuId{2}));
  CHECK(GpuSet::Parse("", 8)->empty());
}

TEST_CASE("GpuSet rejects duplicate, unknown and malformed ids", "[gpu_set]") {
  struct Row {
    const char* name;
    const char* text;
    const char* message;
  };
  const Row rows[] = {
      {"duplicate", "1,2,1", "listed twice"},
      {"beyond the node", "0,8", "unknown GPU id 8"},
      {"negative", "-1", "unknown GPU id -1"},
      {"not a number", "0,x", "not a GPU id"},
      {"empty element", "0,,1", "not a GPU id"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      absl::StatusOr<GpuSet> set = GpuSet::Parse(row.text, 8);
      REQUIRE_FALSE(set.ok());
      CHECK(set.status().code() == absl::StatusCode::kInvalidArgument);
      CHECK_THAT(std::string(set.status().message()), Catch::Contains(row.message));
    }
  }
}

}  // namespace
}  // namespace topofit::topology
