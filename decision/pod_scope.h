#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace topofit::decision {

// Which pods an option covers by namespace and name, the way restart tools scope themselves (watched
// namespaces, ignored namespaces, ignored name prefixes). The restart collector and its notifications each
// have one: a cluster may record every restart but page only for production's.
struct PodScope {
  std::vector<std::string> namespaces;             // only these; empty: every namespace
  std::vector<std::string> ignored_namespaces;
  std::vector<std::string> ignored_name_prefixes;  // pods whose names start with one are left out

  bool Covers(absl::string_view pod_namespace, absl::string_view pod_name) const;
};

}  // namespace topofit::decision
