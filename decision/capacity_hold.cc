#include "decision/capacity_hold.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decision/node_group_identity.h"

namespace topofit::decision {

CapacityHolds::CapacityHolds(const std::vector<Intent>& intents, const std::vector<Preference>& preferences) {
  std::map<absl::string_view, const Preference*> pending;
  for (const Preference& preference : preferences) pending.emplace(preference.pod_uid, &preference);
  for (const Intent& intent : intents) {
    Held held{intent, 0, {}};
    for (const std::string& uid : intent.pod_uids) {
      auto gpus = intent.pod_gpus.find(uid);
      if (gpus == intent.pod_gpus.end() || gpus->second <= 0) continue;  // not held for
      auto preference = pending.find(uid);
      held.gpus += gpus->second;
      held.pods.push_back(preference != pending.end() ? preference->second->pod_key : uid);
    }
    if (held.gpus > 0) held_.push_back(std::move(held));
  }
}

std::vector<const CapacityHolds::Held*> CapacityHolds::Holding(absl::string_view pod_uid,
                                                               const NodeGpuSnapshot& node) const {
  std::vector<const Held*> holding;
  if (held_.empty() || node.origin == nullptr) return holding;
  for (const Held& held : held_) {
    const std::vector<std::string>& uids = held.intent.pod_uids;
    if (std::find(uids.begin(), uids.end(), pod_uid) != uids.end()) continue;  // bought for this pod
    if (!BroughtBy(held.intent, node.origin->labels, node.origin->created_seconds)) continue;
    holding.push_back(&held);
  }
  return holding;
}

int CapacityHolds::HeldAgainst(absl::string_view pod_uid, const NodeGpuSnapshot& node) const {
  int held_gpus = 0;
  for (const Held* held : Holding(pod_uid, node)) held_gpus += held->gpus;
  return held_gpus;
}

std::string CapacityHolds::ReasonText(absl::string_view pod_uid, const NodeVerdict& verdict,
                                      const NodeGpuSnapshot& node) const {
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
  if (held_gpus == 0 || free_gpus - demand.request.gpus >= held_gpus) return verdict;
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
  if (verdict.refusal == Refusal::kHeldForScaleUp) return holds.ReasonText(pod_uid, verdict, node);
  return ReasonText(verdict, node.topology_origin);
}

}  // namespace topofit::decision
