#include "expander/intent.h"

#include <string>
#include <unordered_set>

#include "ledger/node_group_identity.h"
#include "ledger/pod_uid.h"
#include "scheduler/pod_demand.h"

namespace topofit::expander {

std::optional<ledger::Intent> IntentFor(const RankInput& input, const Ranking& ranking) {
  // Verdicts are in the options' order (expander/rank.h): one pass pairs them.
  const std::unordered_set<std::string> chosen(ranking.chosen.begin(), ranking.chosen.end());
  const GroupOption* gpu_option = nullptr;
  for (size_t i = 0; i < ranking.verdicts.size() && i < input.options.size(); ++i) {
    if (!ranking.verdicts[i].needs_gpus || chosen.count(input.options[i].node_group_id) == 0) continue;
    if (gpu_option != nullptr) return std::nullopt;  // several GPU groups: CA's choice
    gpu_option = &input.options[i];
  }
  if (gpu_option == nullptr) return std::nullopt;
  ledger::Intent intent;
  intent.node_group = gpu_option->node_group_id;
  intent.node_count = gpu_option->node_count;
  if (auto template_node = input.templates.find(intent.node_group); template_node != input.templates.end()) {
    intent.node_labels = ledger::NodeGroupLabels(template_node->second);
  }
  for (const kube::Pod& pod : gpu_option->pods) {
    const std::string& uid = ledger::LedgerPodUid(pod);
    if (uid.empty()) continue;
    intent.pod_uids.push_back(uid);
    // Held for: pods whose required topology the group was chosen to serve. A pod that only counts GPUs
    // is served as well by any capacity, and holding the node for it would only keep others waiting.
    absl::StatusOr<scheduler::GpuDemand> demand = scheduler::DemandOf(pod);
    if (demand.ok() && demand->wants_gpus() && demand->constraints_required()) {
      intent.pod_gpus[uid] = demand->request.gpus;
    }
  }
  return intent;
}

}  // namespace topofit::expander
