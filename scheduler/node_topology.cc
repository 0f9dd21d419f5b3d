#include "scheduler/node_topology.h"

#include "absl/strings/str_cat.h"
#include "codec/topology_json.h"
#include "kube/quantity.h"
#include "topology/catalog.h"
#include "topology/nvidia_smi.h"

namespace topofit::scheduler {
namespace {

std::string Label(const kube::Node& node, absl::string_view key) {
  auto it = node.metadata.labels.find(key);
  return it == node.metadata.labels.end() ? "" : it->second;
}

}  // namespace

int AllocatableGpus(const kube::Node& node) {
  auto it = node.status.allocatable.find(kube::kResourceNvidiaGpu);
  if (it == node.status.allocatable.end()) return 0;
  absl::StatusOr<int64_t> count = kube::MilliToCount(it->second);
  // Far beyond any node; keeps a hostile value from reaching arithmetic.
  constexpr int64_t kMostGpus = 1 << 16;
  return count.ok() && *count > 0 && *count <= kMostGpus ? static_cast<int>(*count) : 0;
}

absl::StatusOr<NodeTopology> TopologyResolver::Resolve(const kube::Node& node) {
  auto annotation = node.metadata.annotations.find(kGpuTopologyAnnotation);
  const std::string annotation_text =
      annotation == node.metadata.annotations.end() ? "" : annotation->second;
  const int allocatable = AllocatableGpus(node);
  // Everything the result depends on, NUL-separated.
  const std::string key = absl::StrCat(annotation_text, std::string(1, '\0'), allocatable, std::string(1, '\0'),
                                       Label(node, topology::kInstanceTypeLabel), std::string(1, '\0'),
                                       Label(node, topology::kGpuProductLabel), std::string(1, '\0'),
                                       Label(node, topology::kGpuCountLabel), std::string(1, '\0'),
                                       Label(node, topology::kGpuCliqueLabel));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }

  NodeTopology resolved;
  if (!annotation_text.empty()) {
    absl::StatusOr<topology::Topology> parsed = codec::ParseTopologyAnnotation(
        annotation_text, topology::NvidiaSmiHints{Label(node, topology::kGpuProductLabel)});
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ", node.metadata.name, ": annotation ", kGpuTopologyAnnotation, ": ",
                       parsed.status().message()));
    }
    resolved = {std::make_shared<const topology::Topology>(*std::move(parsed)), "annotation"};
  } else {
    absl::StatusOr<topology::LabelledTopology> labelled =
        topology::TopologyFromLabels(node.metadata.labels, allocatable);
    if (!labelled.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("node ", node.metadata.name, ": ", labelled.status().message()));
    }
    resolved.topology = std::make_shared<const topology::Topology>(labelled->topology);
    resolved.origin = labelled->fallback ? absl::StrCat("fallback: ", labelled->reason)
                                         : absl::StrCat("catalog:", labelled->shape);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.size() >= kMaxEntries) cache_.clear();
  cache_.emplace(key, resolved);
  return resolved;
}

}  // namespace topofit::scheduler
