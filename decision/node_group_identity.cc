#include "decision/node_group_identity.h"

#include <array>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace topofit::decision {
namespace {

// The GPU shape labels templates carry (GPU Feature Discovery's, set on node groups that scale from zero):
// with kNodeGroupNameLabelKeys, what a template's group is matched by.
constexpr std::array<absl::string_view, 2> kGpuShapeLabelKeys = {"nvidia.com/gpu.product", "nvidia.com/gpu.count"};

// Labels that differ from node to node of one group: a template's value is its own, not the group's.
constexpr std::array<absl::string_view, 2> kPerNodeLabelKeys = {"kubernetes.io/hostname",
                                                                 "topology.kubernetes.io/zone"};

}  // namespace

kube::StringMap NodeGroupLabels(const kube::Node& template_node) {
  const kube::StringMap& labels = template_node.metadata.labels;
  kube::StringMap out;
  const auto take = [&](absl::string_view key) {
    if (auto it = labels.find(key); it != labels.end()) out.insert(*it);
  };
  for (absl::string_view key : kNodeGroupNameLabelKeys) take(key);
  for (absl::string_view key : kGpuShapeLabelKeys) take(key);
  if (!out.empty()) return out;
  out = labels;
  for (absl::string_view key : kPerNodeLabelKeys) {
    if (auto it = out.find(key); it != out.end()) out.erase(it);
  }
  return out;
}

std::string NodeGroupName(const kube::StringMap& labels) {
  for (absl::string_view key : kNodeGroupNameLabelKeys) {
    if (auto it = labels.find(key); it != labels.end()) return it->second;
  }
  return "";
}

bool BroughtBy(const Intent& intent, const kube::StringMap& node_labels, int64_t created_seconds) {
  if (intent.node_labels.empty()) return false;
  // Second resolution on both sides: the API's creationTimestamp has no fraction.
  if (created_seconds < absl::ToUnixSeconds(intent.recorded)) return false;
  for (const auto& [key, value] : intent.node_labels) {
    auto it = node_labels.find(key);
    if (it == node_labels.end() || it->second != value) return false;
  }
  return true;
}

}  // namespace topofit::decision
