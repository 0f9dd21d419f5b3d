#include "replay/operator_tuning.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "decision/topology_affinity.h"

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
  std::vector<decision::GroupShape> shapes;
  shapes.reserve(groups.size());
  for (const GroupState& group : groups) shapes.push_back({&group.template_node, group.topology.get()});
  return decision::TopologyAffinity(pod, request, shapes);
}

std::vector<kube::PreferredSchedulingTerm> OperatorPreferredAffinity(const kube::Pod& pod,
                                                                     const topology::AllocationRequest& request,
                                                                     const std::vector<GroupState>& groups) {
  std::vector<kube::PreferredSchedulingTerm> preferred;
  if (std::optional<kube::NodeSelector> affinity = OperatorAffinity(pod, request, groups)) {
    for (kube::NodeSelectorTerm& term : affinity->terms) preferred.push_back({100, std::move(term)});
  }
  return preferred;
}

bool CanGiveTopology(const GroupState& group, const topology::AllocationRequest& request) {
  return decision::CanGiveTopology(group.topology.get(), request);
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
