#include "decision/gang_capacity_target.h"

#include <map>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "decision/gang_placement.h"
#include "decision/node_group_identity.h"
#include "kube/node_affinity.h"

namespace topofit::decision {
namespace {

bool CarriesAll(const kube::StringMap& node_labels, const kube::StringMap& group_labels) {
  for (const auto& [key, value] : group_labels) {
    const auto it = node_labels.find(key);
    if (it == node_labels.end() || it->second != value) return false;
  }
  return true;
}

kube::NodeSelectorTerm GroupTerm(const kube::StringMap& group_labels) {
  kube::NodeSelectorTerm term;
  for (const auto& [key, value] : group_labels) {
    term.match_expressions.push_back({key, kube::NodeSelectorOperator::kIn, {value}});
  }
  return term;
}

// What the rooms came from, to turn the chosen domain back into a request.
struct RoomSource {
  std::string node_group;
  kube::NodeSelectorTerm term;
};

}  // namespace

std::optional<GangCapacityTarget> GangCapacityTargetFor(const kube::Pod& member, const GpuDemand& demand, int members,
                                                        const ClusterShapes& shapes,
                                                        const NvlinkDomainLabels& labels) {
  if (members <= 0 || shapes.topologies == nullptr) return std::nullopt;
  const topology::AllocationRequest request = EnforcedRequest(demand);
  std::vector<GangDomainRoom> rooms;
  std::map<NvlinkDomain, RoomSource> sources;
  for (const auto& [group, shared_template] : shapes.group_templates) {
    const kube::Node& template_node = *shared_template;
    if (!kube::MatchesNodeSelector(member, template_node) || !kube::ToleratesTaints(member, template_node)) continue;
    const absl::StatusOr<std::optional<GroupDomainShape>> shape = GroupDomainShapeOf(template_node, labels);
    if (!shape.ok() || !*shape || !(*shape)->nodes_per_domain) continue;
    const absl::StatusOr<NodeTopology> resolved = shapes.topologies->Resolve(template_node);
    if (!resolved.ok()) continue;
    const topology::Topology& empty = *resolved->topology;
    const int per_new_node = static_cast<int>(MemberSets(empty, empty.all_gpus(), request, members).size());
    const kube::StringMap group_labels = NodeGroupLabels(template_node);
    if (per_new_node == 0 || group_labels.empty()) continue;
    struct Seen {
      int nodes = 0;
      int free_members = 0;
    };
    std::map<NvlinkDomain, Seen> domains;
    for (const NodeGpuSnapshot* node : shapes.nodes) {
      if (!CarriesAll(node->origin->labels, group_labels)) continue;
      const std::optional<NvlinkDomain> domain = NvlinkDomainOf(node->origin->labels, labels);
      if (!domain || domain->label_key != (*shape)->label_key) continue;
      Seen& seen = domains[*domain];
      ++seen.nodes;
      if (node->ready) {
        seen.free_members += static_cast<int>(MemberSets(*node->topology, node->free(), request, members).size());
      }
    }
    const int per_domain = *(*shape)->nodes_per_domain;
    if (domains.empty()) {
      const NvlinkDomain fresh{(*shape)->label_key, topology::DomainId{absl::StrCat("a new domain of node group ", group)}};
      rooms.push_back({.domain = fresh, .free_members = 0, .room_nodes = per_domain, .members_per_new_node = per_new_node});
      sources[fresh] = {group, GroupTerm(group_labels)};
      continue;
    }
    for (const auto& [domain, seen] : domains) {
      rooms.push_back({.domain = domain,
                       .free_members = seen.free_members,
                       .room_nodes = std::max(0, per_domain - seen.nodes),
                       .members_per_new_node = per_new_node});
      kube::NodeSelectorTerm term = GroupTerm(group_labels);
      term.match_expressions.push_back({domain.label_key, kube::NodeSelectorOperator::kIn, {domain.id.value}});
      sources[domain] = {group, std::move(term)};
    }
  }
  const std::optional<GangCapacityAsk> ask = ChooseGangDomain(members, rooms);
  if (!ask) return std::nullopt;
  const RoomSource& source = sources.at(ask->domain);
  return GangCapacityTarget{*ask, source.node_group, source.term};
}

}  // namespace topofit::decision
