#include "replay/operator_tuning.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "decision/capacity_shapes.h"
#include "kube/node_affinity.h"
#include "topology/catalog.h"

namespace topofit::sim {
namespace {

// A regex matching exactly `name`: anchored, with every character that is special in ECMAScript (and in
// Go's RE2) escaped.
std::string AnchoredLiteral(absl::string_view name) {
  std::string regex = "^";
  for (char c : name) {
    if (absl::string_view("\\^$.|?*+()[]{}").find(c) != absl::string_view::npos) regex += '\\';
    regex += c;
  }
  return regex + "$";
}

}  // namespace

std::optional<kube::NodeSelector> OperatorAffinity(const kube::Pod& pod, const topology::AllocationRequest& request,
                                                   const std::vector<GroupState>& groups) {
  kube::NodeSelector selector;
  for (const GroupState& group : groups) {
    if (!kube::MatchesNodeSelector(pod, group.template_node) || !kube::ToleratesTaints(pod, group.template_node) ||
        !CanGiveTopology(group, request)) {
      continue;
    }
    std::optional<kube::NodeSelectorTerm> term = decision::ShapeTerm(group.template_node.metadata.labels);
    if (!term) continue;  // a shape without labels to name it by: no term can pick it
    const bool seen = std::any_of(selector.terms.begin(), selector.terms.end(),
                                  [&](const kube::NodeSelectorTerm& t) { return decision::SameShapeTerm(t, *term); });
    if (!seen) selector.terms.push_back(*std::move(term));
  }
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

bool CanGiveTopology(const GroupState& group, const topology::AllocationRequest& request) {
  if (group.topology == nullptr || group.gpus < request.gpus) return false;
  const absl::StatusOr<topology::FitResult> fit = topology::FitEmptyNode(*group.topology, request);
  return fit.ok() && fit->fits();
}

bool IsNvlinkGroup(const GroupState& group) {
  return CanGiveTopology(group, topology::AllocationRequest{.gpus = 2, .min_link = topology::LinkClass::kNvLink});
}

std::string NvlinkPrioritiesYaml(const std::vector<GroupState>& groups) {
  std::string nvlink;
  for (const GroupState& group : groups) {
    if (IsNvlinkGroup(group)) absl::StrAppend(&nvlink, "  - '", AnchoredLiteral(group.spec.name), "'\n");
  }
  std::string yaml = "10:\n  - '.*'\n";
  if (!nvlink.empty()) absl::StrAppend(&yaml, "20:\n", nvlink);
  return yaml;
}

}  // namespace topofit::sim
