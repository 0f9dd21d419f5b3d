#include "codec/bounded_json.h"

#include <catch2/catch.hpp>

#include <string>

#include "tests/kube/status_matchers.h"

namespace topofit::codec {
namespace {

std::string Nested(int depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

TEST_CASE("NestsDeeperThan counts brackets outside strings only", "[codec][json]") {
  CHECK_FALSE(NestsDeeperThan(Nested(64), 64));
  CHECK(NestsDeeperThan(Nested(65), 64));
  CHECK(NestsDeeperThan(R"({"a":{"b":[1]}})", 2));
  CHECK_FALSE(NestsDeeperThan(R"({"a":{"b":[1]}})", 3));
  // Brackets in strings, escaped quotes included, are text.
  CHECK_FALSE(NestsDeeperThan(R"(["[[[[", "\"[[[[[", "{{{{"])", 1));
  CHECK(NestsDeeperThan(R"(["\\", [[]]])", 2));  // an escaped backslash ends before the quote
  // Siblings do not add up: depth, not count.
  std::string wide = "[";
  for (int i = 0; i < 10'000; ++i) wide += i ? ",{}" : "{}";
  wide += "]";
  CHECK_FALSE(NestsDeeperThan(wide, 2));
}

TEST_CASE("ParseBoundedJson refuses deep nesting before building, and malformed text, by name", "[codec][json]") {
  CHECK_STATUS(ParseBoundedJson(Nested(1'000'000), "ExtenderBindingArgs"), absl::StatusCode::kInvalidArgument,
               "ExtenderBindingArgs: JSON nested deeper than 64 levels");
  CHECK_STATUS(ParseBoundedJson(R"({"a":)", "ExtenderBindingArgs"), absl::StatusCode::kInvalidArgument,
               "ExtenderBindingArgs: malformed JSON");
  absl::StatusOr<nlohmann::json> ok = ParseBoundedJson(R"({"PodName":"p","Node":"n"})", "ExtenderBindingArgs");
  REQUIRE_OK(ok);
  CHECK((*ok)["Node"] == "n");
  // 200,000 empty objects in one member: parsed whole (the callback parser took seconds on this).
  std::string wide = R"({"Unused":[)";
  for (int i = 0; i < 200'000; ++i) wide += i ? ",{}" : "{}";
  wide += "]}";
  absl::StatusOr<nlohmann::json> many = ParseBoundedJson(wide, "ExtenderBindingArgs");
  REQUIRE_OK(many);
  CHECK((*many)["Unused"].size() == 200'000);
}

}  // namespace
}  // namespace topofit::codec
