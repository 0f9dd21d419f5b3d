#include "codec/node_topology.h"

#include "absl/strings/str_cat.h"
#include "codec/topology_json.h"
#include "kube/topofit_annotations.h"
#include "topology/catalog.h"
#include "topology/nvidia_smi.h"

namespace topofit::codec {
namespace {

// What an error names: the node, or a node-group template, which comes without a name (template_key.h).
std::string Subject(const kube::Node& node) {
  return node.metadata.name.empty() ? "template node" : absl::StrCat("node ", node.metadata.name);
}

std::string Label(const kube::Node& node, absl::string_view key) {
  auto it = node.metadata.labels.find(key);
  return it == node.metadata.labels.end() ? "" : it->second;
}

}  // namespace

absl::StatusOr<decision::NodeTopology> TopologyResolver::Resolve(const kube::Node& node) {
  auto annotation = node.metadata.annotations.find(kube::kGpuTopologyAnnotation);
  const std::string annotation_text =
      annotation == node.metadata.annotations.end() ? "" : annotation->second;
  const int allocatable = decision::AllocatableGpus(node);
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

  decision::NodeTopology resolved;
  if (!annotation_text.empty()) {
    absl::StatusOr<topology::Topology> parsed = ParseTopologyAnnotation(
        annotation_text, topology::NvidiaSmiHints{Label(node, topology::kGpuProductLabel)});
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(Subject(node), ": annotation ", kube::kGpuTopologyAnnotation, ": ",
                       parsed.status().message()));
    }
    const std::string form = parsed->source() == "json" ? "a JSON descriptor" : "nvidia-smi topo -m output";
    resolved = {std::make_shared<const topology::Topology>(*std::move(parsed)), "annotation",
                absl::StrCat("annotation ", kube::kGpuTopologyAnnotation, ": ", form)};
  } else {
    absl::StatusOr<topology::LabelledTopology> labelled =
        topology::TopologyFromLabels(node.metadata.labels, allocatable);
    if (!labelled.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(Subject(node), ": ", labelled.status().message()));
    }
    resolved.topology = std::make_shared<const topology::Topology>(labelled->topology);
    resolved.origin = labelled->fallback ? absl::StrCat("fallback: ", labelled->reason)
                                         : absl::StrCat("catalog:", labelled->shape);
    resolved.reason = labelled->reason;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (cache_.size() >= kMaxEntries) cache_.clear();
  cache_.emplace(key, resolved);
  return resolved;
}

absl::StatusOr<decision::NodeTopology> TopologyResolver::ResolveShared(const std::shared_ptr<const kube::Node>& node) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = by_object_.find(node.get()); it != by_object_.end()) return it->second.topology;
  }
  absl::StatusOr<decision::NodeTopology> resolved = Resolve(*node);
  if (!resolved.ok()) return resolved;
  std::lock_guard<std::mutex> lock(mu_);
  if (by_object_.size() >= kMaxEntries) by_object_.clear();
  by_object_.try_emplace(node.get(), SharedEntry{node, *resolved});
  return resolved;
}

}  // namespace topofit::codec
