#include "decision/topology_affinity.h"

#include <algorithm>
#include <utility>

#include "decision/capacity_shapes.h"
#include "kube/node_affinity.h"

namespace topofit::decision {

bool CanGiveTopology(const topology::Topology* topology, const topology::AllocationRequest& request) {
  if (topology == nullptr || topology->gpu_count() < request.gpus) return false;
  const absl::StatusOr<topology::FitResult> fit = topology::FitEmptyNode(*topology, request);
  return fit.ok() && fit->fits();
}

std::vector<kube::NodeSelectorTerm> TopologyShapeTerms(const kube::Pod& pod, const topology::AllocationRequest& request,
                                                       const std::vector<GroupShape>& groups) {
  std::vector<kube::NodeSelectorTerm> terms;
  for (const GroupShape& group : groups) {
    if (!kube::MatchesNodeSelector(pod, *group.template_node) || !kube::ToleratesTaints(pod, *group.template_node) ||
        !CanGiveTopology(group.topology, request)) {
      continue;
    }
    std::optional<kube::NodeSelectorTerm> term = ShapeTerm(group.template_node->metadata.labels);
    if (!term) continue;  // a shape without labels to name it by: no term can pick it
    const bool seen =
        std::any_of(terms.begin(), terms.end(), [&](const kube::NodeSelectorTerm& t) { return SameShapeTerm(t, *term); });
    if (!seen) terms.push_back(*std::move(term));
  }
  return terms;
}

std::optional<kube::NodeSelector> TopologyAffinity(const kube::Pod& pod, const topology::AllocationRequest& request,
                                                   const std::vector<GroupShape>& groups) {
  kube::NodeSelector selector{TopologyShapeTerms(pod, request, groups)};
  if (selector.terms.empty()) return std::nullopt;
  if (!pod.spec.required_node_affinity) return selector;
  // The pod's own terms still hold (an instance type can come with several products): each is ANDed
  // with each group's.
  kube::NodeSelector combined;
  for (const kube::NodeSelectorTerm& own : pod.spec.required_node_affinity->terms) {
    for (const kube::NodeSelectorTerm& group : selector.terms) {
      kube::NodeSelectorTerm term = own;
      term.match_expressions.insert(term.match_expressions.end(), group.match_expressions.begin(),
                                    group.match_expressions.end());
      combined.terms.push_back(std::move(term));
    }
  }
  return combined;
}

}  // namespace topofit::decision
