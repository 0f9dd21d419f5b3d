#include "decision/nvlink_domain.h"

#include <set>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decision/annotation_value.h"
#include "kube/topofit_annotations.h"
#include "topology/catalog.h"

namespace topofit::decision {

NvlinkDomainLabels NvlinkDomainLabels::Default() {
  return NvlinkDomainLabels({std::string(topology::kGpuCliqueLabel), std::string(kAwsUltraserverLabel)});
}

absl::StatusOr<NvlinkDomainLabels> NvlinkDomainLabels::Create(std::vector<std::string> keys) {
  if (keys.empty()) return absl::InvalidArgumentError("NVLink domain labels: the list is empty");
  std::set<absl::string_view> seen;
  for (const std::string& key : keys) {
    if (key.empty()) return absl::InvalidArgumentError("NVLink domain labels: an empty label key");
    if (!seen.insert(key).second) {
      return absl::InvalidArgumentError(absl::StrCat("NVLink domain labels: ", key, " is listed twice"));
    }
  }
  return NvlinkDomainLabels(std::move(keys));
}

bool NvlinkDomainLabels::Contains(absl::string_view key) const { return absl::c_linear_search(keys_, key); }

std::optional<NvlinkDomain> NvlinkDomainOf(const kube::StringMap& node_labels, const NvlinkDomainLabels& labels) {
  for (const std::string& key : labels.keys()) {
    // An empty value names no domain: every node carrying it would otherwise share one.
    if (auto it = node_labels.find(key); it != node_labels.end() && !it->second.empty()) {
      return NvlinkDomain{.label_key = key, .id = topology::DomainId{it->second}};
    }
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<GroupDomainShape>> GroupDomainShapeOf(const kube::Node& template_node,
                                                                   const NvlinkDomainLabels& labels) {
  std::optional<int> nodes_per_domain;
  const kube::StringMap& annotations = template_node.metadata.annotations;
  if (auto it = annotations.find(kube::kNodesPerDomainAnnotation); it != annotations.end()) {
    absl::StatusOr<int> count = ParseCountAnnotation(it->first, it->second);
    if (!count.ok()) return count.status();
    nodes_per_domain = *count;
  }
  std::optional<NvlinkDomain> domain = NvlinkDomainOf(template_node.metadata.labels, labels);
  if (!domain) {
    if (!nodes_per_domain) return std::nullopt;
    return AnnotationError(kube::kNodesPerDomainAnnotation, annotations.find(kube::kNodesPerDomainAnnotation)->second,
                           absl::StrCat("the template carries no domain label (", absl::StrJoin(labels.keys(), ", "),
                                        ") to tell its nodes' domains apart"));
  }
  return GroupDomainShape{.label_key = std::move(domain->label_key), .nodes_per_domain = nodes_per_domain};
}

}  // namespace topofit::decision
