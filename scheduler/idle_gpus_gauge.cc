#include "scheduler/idle_gpus_gauge.h"

#include <vector>

namespace topofit::scheduler {

IdleGpusGauge::IdleGpusGauge(server::MetricsRegistry& registry, const GpuState& state, const ledger::Ledger& ledger)
    : gauge_(registry.AddGauge("topofit_idle_gpus",
                               "Free GPUs of the known nodes by why they are idle: booting, held-for-intent, "
                               "awaiting-scale-down, fragmented, no-demand",
                               {"reason", "node_group"})),
      state_(state),
      ledger_(ledger) {}

void IdleGpusGauge::RecordChangesTo(history::DecisionRecorder* recorder, const server::Clock* clock) {
  recorder_ = recorder;
  clock_ = clock;
}

void IdleGpusGauge::Refresh() {
  const std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> snapshots = state_.Snapshots();
  std::vector<const decision::NodeGpuSnapshot*> nodes;
  for (const auto& s : snapshots) nodes.push_back(s.get());
  const std::vector<history::NodeIdleGpus> idle =
      history::ClassifyIdleNodes(nodes, ledger_.Intents(), ledger_.Preferences());
  std::map<std::pair<std::string, std::string>, int> counts;
  for (const history::NodeIdleGpus& node : idle) {
    for (size_t r = 0; r < history::kIdleReasons; ++r) {
      if (node.counts[r] > 0) {
        counts[{std::string(history::IdleReasonName(static_cast<history::IdleReason>(r))), node.node_group}] +=
            node.counts[r];
      }
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& labels : shown_) {
    if (counts.count(labels) == 0) gauge_.Set(0, {labels.first, labels.second});  // gone since
  }
  shown_.clear();
  for (const auto& [labels, n] : counts) {
    gauge_.Set(n, {labels.first, labels.second});
    shown_.insert(labels);
  }
  if (recorder_ != nullptr) idle_records_.RecordChanges(clock_->Now(), idle, *recorder_);
}

void IdleGpusGauge::Start(absl::Duration period) {
  refresher_ = std::make_unique<server::Periodic>(period, [this] { Refresh(); });
}

}  // namespace topofit::scheduler
