#include "decision/capacity_shapes.h"

#include <algorithm>
#include <string>
#include <utility>

#include "topology/allocator.h"
#include "topology/catalog.h"

namespace topofit::decision {
std::optional<kube::NodeSelectorTerm> ShapeTerm(const kube::StringMap& labels) {
  kube::NodeSelectorTerm term;
  const auto label = [&](absl::string_view key) {
    const auto it = labels.find(std::string(key));
    if (it == labels.end()) return false;
    term.match_expressions.push_back({std::string(key), kube::NodeSelectorOperator::kIn, {it->second}});
    return true;
  };
  if (label(topology::kInstanceTypeLabel)) return term;
  if (label(topology::kGpuProductLabel) && label(topology::kGpuCountLabel)) return term;
  return std::nullopt;
}

bool SameShapeTerm(const kube::NodeSelectorTerm& a, const kube::NodeSelectorTerm& b) {
  const auto same = [](const kube::NodeSelectorRequirement& x, const kube::NodeSelectorRequirement& y) {
    return x.key == y.key && x.op == y.op && x.values == y.values;
  };
  return std::equal(a.match_expressions.begin(), a.match_expressions.end(), b.match_expressions.begin(),
                    b.match_expressions.end(), same) &&
         std::equal(a.match_fields.begin(), a.match_fields.end(), b.match_fields.begin(), b.match_fields.end(), same);
}

std::vector<kube::NodeSelectorTerm> ShapeTermsFor(const Preference& preference, const ClusterShapes& shapes) {
  const topology::AllocationRequest ask{.gpus = preference.gpus,
                                        .min_link = preference.min_link,
                                        .min_bandwidth_mbps = preference.min_bandwidth_mbps};
  std::vector<kube::NodeSelectorTerm> terms;
  bool some_shape_left_out = false, unnamed = false;
  // Nodes of a group share their topology: each is fitted once (thousands of nodes, a few shapes).
  std::vector<std::pair<const topology::Topology*, bool>> gives;
  const auto serves = [&](const topology::Topology* shape) {
    for (const auto& [seen, fits] : gives) {
      if (seen == shape) return fits;
    }
    const absl::StatusOr<topology::FitResult> empty = topology::FitEmptyNode(*shape, ask);
    gives.emplace_back(shape, empty.ok() && empty->fits());
    return gives.back().second;
  };
  const auto consider = [&](const topology::Topology* shape, const kube::StringMap& labels) {
    if (shape == nullptr) return;
    if (!serves(shape)) {
      some_shape_left_out = true;
      return;
    }
    std::optional<kube::NodeSelectorTerm> term = ShapeTerm(labels);
    if (!term) {
      unnamed = true;
      return;
    }
    const bool seen = std::any_of(terms.begin(), terms.end(), [&](const kube::NodeSelectorTerm& t) { return SameShapeTerm(t, *term); });
    if (!seen) terms.push_back(*std::move(term));
  };
  for (const NodeGpuSnapshot* node : shapes.nodes) consider(node->topology.get(), node->origin->labels);
  for (const auto& entry : shapes.group_templates) {
    if (shapes.topologies == nullptr) break;
    const absl::StatusOr<NodeTopology> topology = shapes.topologies->Resolve(*entry.second);
    if (topology.ok()) consider(topology->topology.get(), entry.second->metadata.labels);
  }
  if (!some_shape_left_out || unnamed) return {};
  return terms;
}

}  // namespace topofit::decision
