#pragma once

// JSON text that every entry point must refuse before building anything from it (codec/json_limits.h),
// for the tests that feed it through the real entry points.

#include <string>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace topofit::testing {

// `depth` arrays, each the only element of the one around it.
inline std::string NestedArrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// `object` as text with one more member, `name`, whose value is the text `raw`: a document that is valid
// in every field the reader looks at, and hostile beside them.
inline std::string WithRawMember(const nlohmann::json& object, absl::string_view name, absl::string_view raw) {
  std::string text = object.dump();
  text.pop_back();  // the closing brace
  return absl::StrCat(text, object.empty() ? "" : ",", nlohmann::json(std::string(name)).dump(), ":", raw, "}");
}

}  // namespace topofit::testing
