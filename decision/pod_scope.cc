#include "decision/pod_scope.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace topofit::decision {

bool PodScope::Covers(absl::string_view pod_namespace, absl::string_view pod_name) const {
  const auto has = [](const std::vector<std::string>& list, absl::string_view value) {
    return std::find(list.begin(), list.end(), value) != list.end();
  };
  if (!namespaces.empty() && !has(namespaces, pod_namespace)) return false;
  if (has(ignored_namespaces, pod_namespace)) return false;
  return std::none_of(ignored_name_prefixes.begin(), ignored_name_prefixes.end(),
                      [pod_name](const std::string& prefix) { return absl::StartsWith(pod_name, prefix); });
}

}  // namespace topofit::decision
