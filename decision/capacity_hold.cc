#include "decision/capacity_hold.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <functional>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "decision/node_group_identity.h"
#include "topology/catalog.h"

namespace topofit::decision {

CapacityHolds::CapacityHolds(const std::vector<Intent>& intents, const std::vector<Preference>& preferences,
                             const std::vector<const NodeGpuSnapshot*>& nodes, const HoldContext& context)
    : context_(context) {
  std::map<absl::string_view, const Preference*> pending;
  for (const Preference& preference : preferences) pending.emplace(preference.pod_uid, &preference);
  // Nodes in creation order (then by name), each brought by at most one intent: the oldest that wants it.
  // Nodes older than every intent were brought by none (BroughtBy): they are left out before sorting.
  int64_t oldest_intent = std::numeric_limits<int64_t>::max();
  for (const Intent& intent : intents) oldest_intent = std::min(oldest_intent, absl::ToUnixSeconds(intent.recorded));
  std::vector<const NodeGpuSnapshot*> by_creation;
  for (const NodeGpuSnapshot* node : nodes) {
    if (node != nullptr && node->origin != nullptr && node->origin->created_seconds >= oldest_intent) {
      by_creation.push_back(node);
    }
  }
  std::sort(by_creation.begin(), by_creation.end(), [](const NodeGpuSnapshot* a, const NodeGpuSnapshot* b) {
    return std::tie(a->origin->created_seconds, a->node) < std::tie(b->origin->created_seconds, b->node);
  });
  std::vector<bool> taken(by_creation.size(), false);
  std::vector<const Intent*> oldest_first;
  for (const Intent& intent : intents) oldest_first.push_back(&intent);
  std::stable_sort(oldest_first.begin(), oldest_first.end(),
                   [](const Intent* a, const Intent* b) { return a->recorded < b->recorded; });
  for (const Intent* intent_ptr : oldest_first) {
    const Intent& intent = *intent_ptr;
    Held held{intent, {}, {}, {}};
    std::vector<const NodeGpuSnapshot*> brought;
    for (size_t i = 0; i < by_creation.size() && static_cast<int>(brought.size()) < intent.node_count; ++i) {
      if (taken[i] || !BroughtBy(intent, by_creation[i]->origin->labels, by_creation[i]->origin->created_seconds)) {
        continue;
      }
      taken[i] = true;
      brought.push_back(by_creation[i]);
    }
    std::vector<int> pending_gpus;
    for (const std::string& uid : intent.pod_uids) {
      auto gpus = intent.pod_gpus.find(uid);
      if (gpus == intent.pod_gpus.end() || gpus->second <= 0) continue;  // not held for
      auto preference = pending.find(uid);
      pending_gpus.push_back(gpus->second);
      held.pods.push_back(preference != pending.end() ? preference->second->pod_key : uid);
    }
    // Each node holds what the pods would take of it, not the intent's whole demand: the pods packed
    // first-fit decreasing over the nodes' free GPUs, as the expander placed them on the empty template
    // nodes (free, so that a pod of the intent that already landed is not held for again). A pod whose GPUs
    // fit no node's remaining count is held on the node with most left, up to what it has.
    std::sort(pending_gpus.begin(), pending_gpus.end(), std::greater<>());
    std::vector<int> left;
    for (const NodeGpuSnapshot* node : brought) left.push_back(node->free().size());
    std::vector<int> on_node(brought.size(), 0);
    for (int gpus : pending_gpus) {
      if (brought.empty()) break;
      auto fit = std::find_if(left.begin(), left.end(), [gpus](int l) { return l >= gpus; });
      if (fit == left.end()) fit = std::max_element(left.begin(), left.end());
      const size_t i = static_cast<size_t>(fit - left.begin());
      const int take = std::min(gpus, left[i]);
      left[i] -= take;
      on_node[i] += take;
    }
    for (size_t i = 0; i < brought.size(); ++i) {
      if (on_node[i] > 0) held.gpus_on.emplace(brought[i]->node, on_node[i]);
      held.nodes.push_back(brought[i]->node);
    }
    // Kept while it holds GPUs on a node, or while its nodes are still to come: its pods may wait for them.
    if (!held.gpus_on.empty() || (!held.pods.empty() && static_cast<int>(brought.size()) < intent.node_count)) {
      held_.push_back(std::move(held));
    }
  }
}

std::vector<const CapacityHolds::Held*> CapacityHolds::Holding(absl::string_view pod_uid,
                                                               const NodeGpuSnapshot& node) const {
  std::vector<const Held*> holding;
  if (held_.empty() || node.origin == nullptr) return holding;
  for (const Held& held : held_) {
    const std::vector<std::string>& uids = held.intent.pod_uids;
    if (std::find(uids.begin(), uids.end(), pod_uid) != uids.end()) continue;  // bought for this pod
    if (std::find(held.nodes.begin(), held.nodes.end(), node.node) == held.nodes.end()) continue;
    holding.push_back(&held);
  }
  return holding;
}

const CapacityHolds::Held* CapacityHolds::HeldFor(absl::string_view pod_uid) const {
  const Held* youngest = nullptr;
  for (const Held& held : held_) {
    auto gpus = held.intent.pod_gpus.find(std::string(pod_uid));
    if (gpus == held.intent.pod_gpus.end() || gpus->second <= 0) continue;
    if (youngest == nullptr || held.intent.recorded > youngest->intent.recorded) youngest = &held;
  }
  return youngest;
}

int64_t CapacityHolds::ComingBandwidth(const Held& held, int gpus) const {
  absl::StatusOr<topology::LabelledTopology> coming = topology::TopologyFromLabels(held.intent.node_labels, 0);
  if (!coming.ok() || gpus < 2 || gpus > coming->topology.gpu_count()) return 0;
  return coming->topology.quality().BestBandwidth(gpus);
}

bool CapacityHolds::WaitsForCapacity(const GpuDemand& demand, absl::string_view pod_uid, const NodeVerdict& fitted,
                                     const NodeGpuSnapshot& node) const {
  if (!context_.now || !fitted.fits || !fitted.chosen || !demand.asks_for_topology() || demand.constraints_required()) {
    return false;
  }
  const Held* held = HeldFor(pod_uid);
  if (held == nullptr || std::find(held->nodes.begin(), held->nodes.end(), node.node) != held->nodes.end()) {
    return false;
  }
  const topology::SetQuality& here = fitted.chosen->quality;
  return WaitForComingCapacity(demand, here.bandwidth_mbps, topology::MeetsLinkAndBandwidth(here, demand.request),
                               ComingBandwidth(*held, demand.request.gpus), *context_.now - held->intent.recorded,
                               context_.wait);
}

int CapacityHolds::HeldAgainst(absl::string_view pod_uid, const NodeGpuSnapshot& node) const {
  int held_gpus = 0;
  for (const Held* held : Holding(pod_uid, node)) {
    auto on = held->gpus_on.find(node.node);
    if (on != held->gpus_on.end()) held_gpus += on->second;
  }
  return held_gpus;
}

std::string CapacityHolds::ReasonText(absl::string_view pod_uid, const NodeVerdict& verdict,
                                      const NodeGpuSnapshot& node) const {
  if (verdict.refusal == Refusal::kWaitingForCapacity) {
    const Held* held = HeldFor(pod_uid);
    if (held == nullptr) return "topofit: waiting for the capacity scaled up for this pod";
    return absl::StrCat("topofit: waiting for node group ", held->intent.node_group,
                        ", scaled up for this pod ", absl::FormatDuration(absl::Trunc(context_.now.value_or(held->intent.recorded) - held->intent.recorded, absl::Seconds(1))),
                        " ago, whose GPUs give it the topology it prefers (here at best ",
                        topology::LinkClassName(verdict.chosen ? verdict.chosen->quality.weakest : topology::LinkClass::kSys),
                        "); it takes this node if they are not up ", absl::FormatDuration(context_.wait.max_wait),
                        " after the scale-up");
  }
  std::vector<std::string> why;
  for (const Held* held : Holding(pod_uid, node)) {
    why.push_back(absl::StrCat("node group ", held->intent.node_group, " scaled up for ",
                               absl::StrJoin(held->pods, ", ")));
  }
  return absl::StrCat("topofit: ", verdict.held_gpus, " of the node's ", verdict.free_gpus,
                      " free GPUs are held for pending pods (", absl::StrJoin(why, "; "), ")");
}

NodeVerdict JudgeNode(const GpuDemand& demand, absl::string_view pod_uid, const NodeGpuSnapshot& node,
                      const CapacityHolds& holds, FilterMemo& memo) {
  NodeVerdict verdict = memo.Judge(demand, node).verdict;
  if (!verdict.fits || !demand.wants_gpus()) return verdict;
  const int held_gpus = holds.HeldAgainst(pod_uid, node);
  const int free_gpus = node.free().size();
  if (held_gpus == 0 || free_gpus - demand.request.gpus >= held_gpus) {
    if (!holds.WaitsForCapacity(demand, pod_uid, verdict, node)) return verdict;
    // Refused for now, keeping the set it would have had for the reason (capacity_wait.h).
    verdict.fits = false;
    verdict.unresolvable = true;
    verdict.refusal = Refusal::kWaitingForCapacity;
    return verdict;
  }
  NodeVerdict held;
  held.unresolvable = true;
  held.refusal = Refusal::kHeldForScaleUp;
  held.requested_gpus = demand.request.gpus;
  held.held_gpus = held_gpus;
  held.free_gpus = free_gpus;
  return held;
}

std::string JudgedReasonText(const NodeVerdict& verdict, absl::string_view pod_uid, const NodeGpuSnapshot& node,
                             const CapacityHolds& holds) {
  if (verdict.refusal == Refusal::kHeldForScaleUp || verdict.refusal == Refusal::kWaitingForCapacity) {
    return holds.ReasonText(pod_uid, verdict, node);
  }
  return ReasonText(verdict, node.topology_origin);
}

}  // namespace topofit::decision
