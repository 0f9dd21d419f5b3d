#pragma once

// Small matchers for absl::Status / absl::StatusOr results in Catch2 tests:
//   REQUIRE_OK(result);
//   CHECK_STATUS(result, absl::StatusCode::kInvalidArgument, "not a quantity");

#include <catch2/catch.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"

namespace topofit::testing {

inline absl::Status StatusOf(const absl::Status& status) { return status; }
template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& result) {
  return result.status();
}

}  // namespace topofit::testing

#define REQUIRE_OK(result)                                                   \
  do {                                                                       \
    const absl::Status require_ok_ = ::topofit::testing::StatusOf(result);  \
    INFO(require_ok_.ToString());                                            \
    REQUIRE(require_ok_.ok());                                               \
  } while (false)

#define CHECK_STATUS(result, expected_code, substring)                                  \
  do {                                                                                  \
    const absl::Status check_status_ = ::topofit::testing::StatusOf(result);           \
    INFO(check_status_.ToString());                                                     \
    CHECK(check_status_.code() == (expected_code));                                     \
    CHECK(absl::StrContains(check_status_.message(), (substring)));                     \
  } while (false)
