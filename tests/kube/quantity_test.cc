#include "kube/quantity.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "tests/kube/status_matchers.h"

namespace topofit::kube {
namespace {

TEST_CASE("ParseQuantityMilli reads every suffix and number form", "[quantity]") {
  struct Row {
    const char* name;
    const char* text;
    int64_t milli;
  };
  // Expected values in thousandths of the unit, with the arithmetic beside each.
  const Row rows[] = {
      {"zero", "0", 0},
      {"integer", "2", 2000},                                    // 2 * 1000
      {"explicit plus", "+3", 3000},                             // 3 * 1000
      {"negative", "-2", -2000},                                 // -(2 * 1000)
      {"milli", "500m", 500},                                    // 500
      {"fraction", "0.5", 500},                                  // 0.5 * 1000
      {"fraction without integer part", ".25", 250},             // 0.25 * 1000
      {"point without fraction", "7.", 7000},                    // 7 * 1000
      {"negative fraction", "-0.5", -500},                       // -(0.5 * 1000)
      {"kilo", "2k", 2000000},                                   // 2 * 10^3 * 1000
      {"mega", "1M", 1000000000},                                // 10^6 * 1000
      {"giga", "1G", 1000000000000},                             // 10^9 * 1000
      {"tera", "1T", 1000000000000000},                          // 10^12 * 1000
      {"peta", "1P", 1000000000000000000},                       // 10^15 * 1000
      {"exa fraction", "0.005E", 5000000000000000000},           // 0.005 * 10^18 * 1000
      {"micro", "1500u", 2},                                     // 1500 * 10^-6 * 1000 = 1.5, up to 2
      {"nano rounds up", "1n", 1},                               // 10^-9 * 1000 = 10^-6, up to 1
      {"nano whole milli", "3000000n", 3},                       // 3 * 10^6 * 10^-9 * 1000
      {"kibi", "1Ki", 1024000},                                  // 2^10 * 1000
      {"mebi fraction", "1.5Mi", 1572864000},                    // 1.5 * 2^20 * 1000
      {"gibi", "16Gi", 17179869184000},                          // 16 * 2^30 * 1000
      {"tebi", "2Ti", 2199023255552000},                         // 2 * 2^40 * 1000
      {"pebi", "1Pi", 1125899906842624000},                      // 2^50 * 1000
      {"exbi fraction", "0.001Ei", 1152921504606846976},         // 0.001 * 2^60 * 1000 = 2^60
      {"binary rounds up", "0.0001Ki", 103},                     // 0.1024 * 1000 = 102.4, up to 103
      {"exponent", "1e3", 1000000},                              // 10^3 * 1000
      {"capital exponent", "2E2", 200000},                       // 2 * 10^2 * 1000
      {"negative exponent", "5e-1", 500},                        // 5 * 10^-1 * 1000
      {"signed exponent", "5e+1", 50000},                        // 5 * 10 * 1000
      {"fraction and exponent", "1.5e3", 1500000},               // 1.5 * 10^3 * 1000
      {"tiny exponent rounds up", "1e-100", 1},                  // up to one thousandth
      {"leading zeros", "0007", 7000},                           // 7 * 1000
      {"negative zero", "-0", 0},
      {"zero with huge exponent", "0e999999999999999999999", 0},
      {"largest", "9223372036854775.807", 9223372036854775807},  // INT64_MAX thousandths
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const absl::StatusOr<int64_t> milli = ParseQuantityMilli(row.text);
      REQUIRE_OK(milli);
      CHECK(*milli == row.milli);
    }
  }
}

TEST_CASE("ParseQuantityMilli rejects what is not a quantity", "[quantity]") {
  struct Row {
    const char* name;
    const char* text;
    absl::StatusCode code;
    const char* message;
  };
  const Row rows[] = {
      {"empty", "", absl::StatusCode::kInvalidArgument, "expected a number"},
      {"sign only", "-", absl::StatusCode::kInvalidArgument, "expected a number"},
      {"point only", ".", absl::StatusCode::kInvalidArgument, "expected a number"},
      {"suffix only", "Gi", absl::StatusCode::kInvalidArgument, "expected a number"},
      {"leading space", " 1", absl::StatusCode::kInvalidArgument, "expected a number"},
      {"unknown suffix", "1K", absl::StatusCode::kInvalidArgument, "unknown suffix \"K\""},
      {"lower-case binary", "1ki", absl::StatusCode::kInvalidArgument, "unknown suffix"},
      {"two points", "1.2.3", absl::StatusCode::kInvalidArgument, "unknown suffix \".3\""},
      {"exponent without digits", "1e", absl::StatusCode::kInvalidArgument, "unknown suffix"},
      {"exponent sign only", "1e+", absl::StatusCode::kInvalidArgument, "unknown suffix"},
      {"fractional exponent", "1e1.5", absl::StatusCode::kInvalidArgument, "unknown suffix"},
      {"trailing space", "1 ", absl::StatusCode::kInvalidArgument, "unknown suffix"},
      {"word", "two", absl::StatusCode::kInvalidArgument, "expected a number"},
      // INT64_MAX is 9223372036854775807 thousandths.
      {"one past the largest", "9223372036854775.808", absl::StatusCode::kOutOfRange, "too large"},
      {"exbi", "0.5Ei", absl::StatusCode::kOutOfRange, "too large"},  // 2^59 * 1000 ~ 5.8e20
      {"exa", "10E", absl::StatusCode::kOutOfRange, "too large"},     // 10^19 * 1000
      {"many digits", "123456789012345678901234567890", absl::StatusCode::kOutOfRange, "too large"},
      {"huge exponent", "1e999999999999999999999", absl::StatusCode::kOutOfRange, "too large"},
      {"negative overflow", "-1E", absl::StatusCode::kOutOfRange, "too large"},  // -10^18 * 1000
  };
  for (const Row& row : rows) {
    SECTION(row.name) { CHECK_STATUS(ParseQuantityMilli(row.text), row.code, row.message); }
  }
}

TEST_CASE("ParseQuantityCount takes whole counts only", "[quantity]") {
  struct Row {
    const char* name;
    const char* text;
    int64_t count;  // -1: an error
  };
  const Row rows[] = {
      {"whole", "2", 2},
      {"kilo", "2k", 2000},
      {"milli that is whole", "3000m", 3},  // 3000 / 1000
      {"exponent", "8e0", 8},
      {"zero", "0", 0},
      {"fraction", "1.5", -1},      // 1500 thousandths
      {"milli", "500m", -1},        // 500 thousandths
      {"not a quantity", "x", -1},  // the parser's error
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const absl::StatusOr<int64_t> count = ParseQuantityCount(row.text);
      if (row.count < 0) {
        CHECK(count.status().code() == absl::StatusCode::kInvalidArgument);
      } else {
        REQUIRE_OK(count);
        CHECK(*count == row.count);
      }
    }
  }
  CHECK_STATUS(ParseQuantityCount("1.5"), absl::StatusCode::kInvalidArgument, "must be a whole number, found 1500m");
  CHECK_STATUS(MilliToCount(-250), absl::StatusCode::kInvalidArgument, "found -250m");
  CHECK(*MilliToCount(-2000) == -2);
}

}  // namespace
TEST_CASE("A huge bad quantity is quoted by a short prefix, not echoed whole", "[quantity][hostile]") {
  // A 10 MB value became a 10 MB error message, log line and HTTP reply (issue 15).
  const std::string huge = "1" + std::string(10 << 20, 'x');
  for (const absl::Status& status : {ParseQuantityMilli(huge).status(), ParseQuantityCount(huge).status()}) {
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(status.message().size() < 300);  // the value and its bad suffix, 64 bytes of each
    CHECK(absl::StrContains(status.message(), "...\" (10485761 bytes)"));
  }
}

}  // namespace topofit::kube
