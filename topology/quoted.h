#pragma once

// How error messages quote a value that came from outside (a label, an annotation, a quantity): at most
// kQuotedBytes of it, so that a 10 MB bad value does not become a 10 MB message, log line and HTTP reply.
// Header-only and free of the model, so the other pure libraries (kube/) use it too.

#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace topofit::topology {

inline constexpr size_t kQuotedBytes = 64;

// "text", or "first 64 bytes..." (N bytes) when longer.
inline std::string Quoted(absl::string_view text) {
  if (text.size() <= kQuotedBytes) return absl::StrCat("\"", text, "\"");
  return absl::StrCat("\"", text.substr(0, kQuotedBytes), "...\" (", text.size(), " bytes)");
}

}  // namespace topofit::topology
