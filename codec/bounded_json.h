#pragma once

// The one way topofit turns untrusted JSON text into an nlohmann document: the text is checked against its
// source's limits (codec/json_limits.h: size, depth, values, string length) first, in one linear pass that
// builds nothing, and only text within them is parsed. Depth must be bounded before the DOM exists, since
// what is built from a document is walked, copied and destroyed recursively; the other limits bound the
// memory a document takes (an nlohmann value is 16 bytes, an object member a map node besides) whatever
// the text packs into its bytes. A plain parse (no callback, whose closing-brace checks rescan the parent)
// is linear in the text.

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codec/json_limits.h"
#include "nlohmann/json.hpp"

namespace topofit::codec {

// OK, or INVALID_ARGUMENT naming `what` and the limit `text` exceeds: "<what>: JSON of N bytes, over the
// limit of M", "... nested deeper than 64 levels", "... of more than N values", "... string longer than N
// bytes". Linear and allocation-free; says nothing of validity (the parser still reads the text).
absl::Status CheckJsonLimits(absl::string_view text, const JsonLimits& limits, absl::string_view what);

// `text` parsed, or INVALID_ARGUMENT: CheckJsonLimits's refusal, or "<what>: malformed JSON".
absl::StatusOr<nlohmann::json> ParseBoundedJson(absl::string_view text, const JsonLimits& limits,
                                                absl::string_view what);

}  // namespace topofit::codec
