#include "decision/intent.h"

#include <algorithm>
#include <string>
#include <unordered_set>

#include "decision/capacity_buffer.h"
#include "decision/claim_pod_demand.h"
#include "decision/group_rank.h"
#include "decision/node_group_identity.h"
#include "decision/pod_uid.h"
#include "decision/pod_demand.h"

namespace topofit::decision {

std::optional<Intent> IntentFor(const RankInput& input, const Ranking& ranking) {
  // Verdicts are in the options' order (group_rank.h): one pass pairs them.
  const std::unordered_set<std::string> chosen(ranking.chosen.begin(), ranking.chosen.end());
  const GroupOption* gpu_option = nullptr;
  const OptionVerdict* gpu_verdict = nullptr;
  for (size_t i = 0; i < ranking.verdicts.size() && i < input.options.size(); ++i) {
    if (!ranking.verdicts[i].needs_gpus || chosen.count(input.options[i].node_group_id) == 0) continue;
    if (gpu_option != nullptr) return std::nullopt;  // several GPU groups: CA's choice
    gpu_option = &input.options[i];
    gpu_verdict = &ranking.verdicts[i];
  }
  if (gpu_option == nullptr) return std::nullopt;
  Intent intent;
  intent.node_group = gpu_option->node_group_id;
  intent.node_count = gpu_option->node_count;
  if (auto template_node = input.templates.find(intent.node_group); template_node != input.templates.end()) {
    intent.node_labels = NodeGroupLabels(*template_node->second);
  }
  for (const kube::Pod& pod : gpu_option->pods) {
    const std::string& uid = LedgerPodUid(pod);
    // A buffer's fake pod never comes to bind: holding the new capacity for it would keep the real pods
    // the buffer is for off it until the intent expired.
    if (uid.empty() || IsCapacityBufferFakePod(pod)) continue;
    intent.pod_uids.push_back(uid);
    // Held for: pods whose required topology the group was chosen to serve, and pods that prefer a
    // topology its nodes give them (they may wait for it: capacity_wait.h). A pod that only counts GPUs is
    // served as well by any capacity, and holding the node for it would only keep others waiting.
    absl::StatusOr<GpuDemand> demand = DemandOnTemplates(pod, input.claims);
    const bool gets_preferred =
        demand.ok() && demand->asks_for_topology() &&
        std::find(gpu_verdict->topology_met.begin(), gpu_verdict->topology_met.end(), uid) != gpu_verdict->topology_met.end();
    if (demand.ok() && demand->wants_gpus() && (demand->constraints_required() || gets_preferred)) {
      intent.pod_gpus[uid] = demand->request.gpus;
    }
  }
  if (intent.pod_uids.empty()) return std::nullopt;  // a scale-up for buffers only: warm for anyone
  return intent;
}

}  // namespace topofit::decision
