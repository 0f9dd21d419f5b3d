#include "history/idle_gpus.h"

#include <algorithm>

#include "decision/capacity_hold.h"
#include "decision/node_group_identity.h"

namespace topofit::history {
absl::string_view IdleReasonName(IdleReason reason) {
  static constexpr std::array<absl::string_view, kIdleReasons> kNames = {
      "booting", "held-for-intent", "awaiting-scale-down", "fragmented", "no-demand"};
  return kNames[static_cast<size_t>(reason)];
}

IdleCounts ClassifyIdleGpus(const decision::NodeGpuSnapshot& node, NodeActivity activity, int held,
                            const std::vector<decision::GpuDemand>& pending, decision::FilterMemo& memo) {
  IdleCounts counts{};
  const int free = node.free().size();
  if (free == 0) return counts;
  if (!activity.ready) {
    counts[static_cast<size_t>(IdleReason::kBooting)] = free;
    return counts;
  }
  const int held_here = std::clamp(held, 0, free);
  counts[static_cast<size_t>(IdleReason::kHeldForIntent)] = held_here;
  const int rest = free - held_here;
  if (rest == 0) return counts;
  IdleReason reason = IdleReason::kNoDemand;
  if ((node.ours | node.elsewhere).empty() && !activity.runs_pods_without_gpus && held_here == 0) {
    reason = IdleReason::kAwaitingScaleDown;
  } else if (!pending.empty() && std::none_of(pending.begin(), pending.end(), [&](const decision::GpuDemand& d) {
               return memo.FilterAndScore(d, node).verdict.fits;
             })) {
    reason = IdleReason::kFragmented;
  }
  counts[static_cast<size_t>(reason)] = rest;
  return counts;
}

std::vector<IdleCounts> ClassifyNodes(const std::vector<const decision::NodeGpuSnapshot*>& nodes,
                                      const std::vector<NodeActivity>& activity, const decision::CapacityHolds& holds,
                                      const std::vector<decision::GpuDemand>& pending, decision::FilterMemo& memo) {
  std::vector<IdleCounts> counts;
  counts.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    counts.push_back(ClassifyIdleGpus(*nodes[i], activity[i], holds.HeldOn(*nodes[i]), pending, memo));
  }
  return counts;
}

decision::GpuDemand PreferredDemand(const decision::Preference& preference) {
  decision::GpuDemand demand;
  demand.request.gpus = preference.gpus;
  demand.request.min_link = preference.min_link;
  demand.request.min_bandwidth_mbps = preference.min_bandwidth_mbps;
  demand.policy = decision::TopologyPolicy::kRequired;
  return demand;
}

std::vector<NodeIdleGpus> ClassifyIdleNodes(const std::vector<const decision::NodeGpuSnapshot*>& nodes,
                                            const std::vector<decision::Intent>& intents,
                                            const std::vector<decision::Preference>& preferences) {
  const decision::CapacityHolds holds(intents, preferences, nodes);
  std::vector<decision::GpuDemand> pending;
  for (const decision::Preference& p : preferences) pending.push_back(PreferredDemand(p));
  decision::FilterMemo memo;
  std::vector<NodeActivity> activity;
  activity.reserve(nodes.size());
  for (const decision::NodeGpuSnapshot* node : nodes) activity.push_back({node->ready, false});
  const std::vector<IdleCounts> counts = ClassifyNodes(nodes, activity, holds, pending, memo);
  std::vector<NodeIdleGpus> out;
  out.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) out.push_back(IdleOf(*nodes[i], counts[i]));
  return out;
}

NodeIdleGpus IdleOf(const decision::NodeGpuSnapshot& node, const IdleCounts& counts) {
  return {node.node, decision::NodeGroupName(node.origin->labels), node.free(), counts};
}

}  // namespace topofit::history
