#pragma once

// The one way topofit turns untrusted JSON text into an nlohmann document: nesting is checked first, in one
// linear pass over the text that builds nothing, and only a document within kMaxJsonDepth is parsed. What is
// built from a document is walked, copied and destroyed recursively (a stack frame per level), so depth must
// be bounded before the DOM exists; and a plain parse (no callback, whose closing-brace checks rescan the
// parent) is linear in the text.

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace topofit::codec {

// JSON nested deeper than this (objects and arrays) is refused with INVALID_ARGUMENT before anything is
// built from it. Kubernetes objects nest about 15 levels (managedFields included); MCP messages fewer.
inline constexpr int kMaxJsonDepth = 64;

// Whether brackets outside strings nest deeper than `limit` in `text`. Linear, allocation-free; says
// nothing of validity (the parser still reads the text).
bool NestsDeeperThan(absl::string_view text, int limit);

// `text` parsed, or INVALID_ARGUMENT "<what>: JSON nested deeper than 64 levels" / "<what>: malformed JSON".
absl::StatusOr<nlohmann::json> ParseBoundedJson(absl::string_view text, absl::string_view what);

}  // namespace topofit::codec
