#pragma once

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"

namespace topofit::bench {

// The value of `--name=value` when `arg` starts with `name` ("--binds="), else empty: the plain-main
// benchmarks' flags.
inline absl::string_view FlagValue(absl::string_view arg, absl::string_view name) {
  return absl::StartsWith(arg, name) ? arg.substr(name.size()) : absl::string_view();
}

}  // namespace topofit::bench
