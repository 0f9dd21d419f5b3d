#include "codec/bounded_json.h"

#include <catch2/catch.hpp>

#include <string>

#include "tests/codec/hostile_json.h"
#include "tests/kube/status_matchers.h"

namespace topofit::codec {
namespace {

using topofit::testing::NestedArrays;

// Small limits, so that each is seen at its edge.
constexpr JsonLimits kSmall{100, 3, 6, 4};

TEST_CASE("CheckJsonLimits counts brackets, values and string bytes outside strings only", "[codec][json]") {
  struct Row {
    const char* name;
    std::string text;
    const char* refusal;  // "" within the limits
  };
  const Row rows[] = {
      {"depth 3", NestedArrays(3), ""},
      {"depth 4", NestedArrays(4), "t: JSON nested deeper than 3 levels"},
      {"objects nest too", R"({"a":{"b":[[1]]}})", "t: JSON nested deeper than 3 levels"},
      // The object, "a", the inner object, "b", [1], 1: six values with the member names; a 2 is the seventh.
      {"six values with member names", R"({"a":{"b":[1]}})", ""},
      {"member names count", R"({"a":{"b":[1,2]}})", "t: JSON of more than 6 values"},
      {"siblings are values, not depth", "[1,2,3,4,5]", ""},  // the array and five numbers
      {"seven values", "[1,2,3,4,5,6]", "t: JSON of more than 6 values"},
      {"a number or literal counts once", "[12345, true,null]", ""},
      {"bytes", std::string(101, ' '), "t: JSON of 101 bytes, over the limit of 100"},
      {"a string of 4 bytes as written", R"(["ab\"", "abcd"])", ""},
      {"a string of 5", R"(["abcde"])", "t: JSON string longer than 4 bytes"},
      {"an unterminated string is measured to the end", R"([" abcde)", "t: JSON string longer than 4 bytes"},
      // Brackets in strings, escaped quotes included, are text; an escaped backslash ends before the quote.
      {"brackets in strings", R"(["[[[[", "\"[[", "{{{{"])", ""},
      {"an escaped backslash", R"(["\\", [[[]]]])", "t: JSON nested deeper than 3 levels"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const absl::Status status = CheckJsonLimits(row.text, kSmall, "t");
      INFO(status.ToString());
      CHECK(std::string(status.message()) == row.refusal);
    }
  }
}

TEST_CASE("ParseBoundedJson refuses text beyond its limits before building, and malformed text, by name",
          "[codec][json]") {
  CHECK_STATUS(ParseBoundedJson(NestedArrays(1'000'000), kRequestJsonLimits, "ExtenderBindingArgs"),
               absl::StatusCode::kInvalidArgument, "ExtenderBindingArgs: JSON nested deeper than 64 levels");
  CHECK_STATUS(ParseBoundedJson(R"({"a":)", kRequestJsonLimits, "ExtenderBindingArgs"),
               absl::StatusCode::kInvalidArgument, "ExtenderBindingArgs: malformed JSON");
  absl::StatusOr<nlohmann::json> ok =
      ParseBoundedJson(R"({"PodName":"p","Node":"n"})", kRequestJsonLimits, "ExtenderBindingArgs");
  REQUIRE_OK(ok);
  CHECK((*ok)["Node"] == "n");
  // 200,000 empty objects in one member: parsed whole (the callback parser took seconds on this).
  std::string wide = R"({"Unused":[)";
  for (int i = 0; i < 200'000; ++i) wide += i ? ",{}" : "{}";
  wide += "]}";
  absl::StatusOr<nlohmann::json> many = ParseBoundedJson(wide, kRequestJsonLimits, "ExtenderBindingArgs");
  REQUIRE_OK(many);
  CHECK((*many)["Unused"].size() == 200'000);
}

}  // namespace
}  // namespace topofit::codec
