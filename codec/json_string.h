#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace topofit::codec {

// Appends `s` as a JSON string literal, byte for byte as nlohmann's dump(-1, ' ', false, replace) writes it:
// printable ASCII without quotes or backslashes (node names, reasons: nearly every string topofit writes)
// is copied as it is; anything else goes through nlohmann. For writers that build JSON text without a
// DOM: building one to dump it cost 13% of a 100-node NodeNames filter's server CPU (bench/RESULTS.md).
void AppendJsonString(std::string& out, absl::string_view s);

}  // namespace topofit::codec
