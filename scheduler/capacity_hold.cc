#include "scheduler/capacity_hold.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ledger/node_group_identity.h"

namespace topofit::scheduler {

CapacityHolds::CapacityHolds(const std::vector<ledger::Intent>& intents,
                             const std::vector<ledger::Preference>& preferences) {
  std::map<absl::string_view, const ledger::Preference*> pending;
  for (const ledger::Preference& preference : preferences) pending.emplace(preference.pod_uid, &preference);
  for (const ledger::Intent& intent : intents) {
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

std::optional<std::string> CapacityHolds::Refusal(absl::string_view pod_uid, int gpus,
                                                  const NodeGpuSnapshot& node) const {
  if (gpus <= 0 || held_.empty() || node.origin == nullptr) return std::nullopt;
  int held_gpus = 0;
  std::vector<const Held*> holding;
  for (const Held& held : held_) {
    const std::vector<std::string>& uids = held.intent.pod_uids;
    if (std::find(uids.begin(), uids.end(), pod_uid) != uids.end()) continue;  // bought for this pod
    if (!ledger::BroughtBy(held.intent, node.origin->labels, node.origin->created_seconds)) continue;
    held_gpus += held.gpus;
    holding.push_back(&held);
  }
  const int free_gpus = node.free().size();
  if (holding.empty() || free_gpus - gpus >= held_gpus) return std::nullopt;
  std::vector<std::string> why;
  for (const Held* held : holding) {
    why.push_back(absl::StrCat("node group ", held->intent.node_group, " scaled up for ",
                               absl::StrJoin(held->pods, ", ")));
  }
  return absl::StrCat("topofit: ", held_gpus, " of the node's ", free_gpus, " free GPUs are held for pending pods (",
                      absl::StrJoin(why, "; "), ")");
}

}  // namespace topofit::scheduler
