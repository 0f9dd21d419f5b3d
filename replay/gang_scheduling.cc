#include "replay/gang_scheduling.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "decision/gang.h"
#include "decision/gang_capacity.h"
#include "decision/gang_placement.h"

namespace topofit::sim {
namespace {

// The GPUs of `node` a gang member must not take: those beyond what the node's CPU and memory leave room
// for, after the successive member sets decision::MemberSets would choose.
topology::GpuSet BeyondResources(const World& world, const SimNode& node, const PodClass& klass) {
  const FreeCapacity free = world.FreeOf(node);
  int64_t by_resources = free.gpus;
  if (klass.cpu_milli > 0) by_resources = std::min(by_resources, free.cpu_milli / klass.cpu_milli);
  if (klass.memory_mib > 0) by_resources = std::min(by_resources, free.memory_mib / klass.memory_mib);
  const std::vector<topology::GpuSet> sets =
      decision::MemberSets(*node.gpus.topology, node.gpus.free(), decision::EnforcedRequest(klass.demand), free.gpus);
  topology::GpuSet kept;
  for (size_t i = 0; i < sets.size() && static_cast<int64_t>(i) < by_resources; ++i) kept = kept | sets[i];
  return node.gpus.free().without(kept);
}

}  // namespace

absl::StatusOr<std::vector<GangMemberPlacement>> PlaceGangMembers(const World& world, int gang) {
  const SimGang& g = world.gangs()[gang];
  std::vector<int> pending;
  for (int member : g.members) {
    if (world.pods()[member].phase == PodPhase::kPending) pending.push_back(member);
  }
  if (pending.empty()) return std::vector<GangMemberPlacement>{};
  const PodClass& klass = world.klass(pending.front());
  absl::StatusOr<std::optional<decision::GangTopology>> wanted =
      decision::GangTopologyOf(klass.prototype, decision::NvlinkDomainLabels::Default());
  if (!wanted.ok()) return wanted.status();
  decision::GangAsk ask{.member = klass.demand,
                        .members = static_cast<int>(pending.size()),
                        .topology = wanted->value_or(decision::GangTopology{})};
  std::vector<decision::GangCandidate> candidates;
  std::map<std::string, int> by_name;
  for (int id : world.ready_nodes()) {
    const SimNode& node = world.nodes()[id];
    if (node.gpus.topology == nullptr || node.free_gpus() < klass.gpus || !klass.group_allowed[node.group]) continue;
    candidates.push_back({.node = &node.gpus, .reserved = BeyondResources(world, node, klass), .domain = node.domain});
    by_name.emplace(node.gpus.node, id);
  }
  absl::StatusOr<decision::GangPlacement> placement = decision::PlaceGang(ask, candidates);
  if (!placement.ok()) return placement.status();
  std::vector<GangMemberPlacement> placed;
  for (size_t i = 0; i < placement->slots.size(); ++i) {
    placed.push_back({.pod = pending[i], .node = by_name.at(placement->slots[i].node), .gpus = placement->slots[i].gpus});
  }
  return placed;
}

std::optional<decision::GangCapacityAsk> GangDomainAskFor(const World& world, int gang) {
  const SimGang& g = world.gangs()[gang];
  const int members = static_cast<int>(std::count_if(g.members.begin(), g.members.end(), [&](int member) {
    return world.pods()[member].phase == PodPhase::kPending;
  }));
  if (members == 0) return std::nullopt;
  const PodClass& klass = world.klass(g.members.front());
  const topology::AllocationRequest request = decision::EnforcedRequest(klass.demand);
  struct Domain {
    int live_nodes = 0;
    int free_members = 0;
  };
  std::map<decision::NvlinkDomain, Domain> domains;
  for (int id : world.live_nodes()) {
    const SimNode& node = world.nodes()[id];
    if (!node.domain) continue;
    Domain& domain = domains[*node.domain];
    ++domain.live_nodes;
    if (node.state != NodeState::kReady) continue;
    const topology::GpuSet usable = node.gpus.free().without(BeyondResources(world, node, klass));
    domain.free_members +=
        static_cast<int>(decision::MemberSets(*node.gpus.topology, usable, request, members).size());
  }
  std::vector<decision::GangDomainRoom> rooms;
  for (size_t group = 0; group < world.groups().size(); ++group) {
    const GroupState& state = world.groups()[group];
    const NodeGroupSpec& spec = state.spec;
    if (spec.nodes_per_domain <= 0 || spec.max_size > spec.nodes_per_domain || state.topology == nullptr ||
        !klass.group_allowed[group]) {
      continue;
    }
    const decision::NvlinkDomain name{spec.domain_label,
                                      topology::DomainId{state.template_node.metadata.labels.at(spec.domain_label)}};
    const Domain& domain = domains[name];
    rooms.push_back({.domain = name,
                     .free_members = domain.free_members,
                     .room_nodes = spec.max_size - domain.live_nodes,
                     .members_per_new_node = static_cast<int>(
                         decision::MemberSets(*state.topology, state.topology->all_gpus(), request, members).size())});
  }
  return decision::ChooseGangDomain(members, rooms);
}

}  // namespace topofit::sim
