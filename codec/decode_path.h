#pragma once

// Where in a decoded object an error is, written the same way by every decoder (JSON and protobuf), so
// an error reads the same whichever wire the object came on:
//   spec.containers[1].resources.requests["nvidia.com/gpu"]

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

#define TOPOFIT_RETURN_IF_ERROR(expr)  \
  do {                                 \
    absl::Status status_ = (expr);     \
    if (!status_.ok()) return status_; \
  } while (false)

namespace topofit::codec {

inline std::string Field(const std::string& path, absl::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}
inline std::string Index(const std::string& path, int64_t index) { return absl::StrCat(path, "[", index, "]"); }
// Escaped, so a key with quotes or bytes that are not UTF-8 cannot garble the message.
inline std::string MapKey(const std::string& path, absl::string_view key) {
  return absl::StrCat(path, "[\"", absl::CHexEscape(key), "\"]");
}

}  // namespace topofit::codec
