#pragma once

#include <mutex>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "history/idle_gpus.h"
#include "history/idle_records.h"
#include "history/recorder.h"
#include "ledger/ledger.h"
#include "scheduler/gpu_state.h"
#include "server/clock.h"
#include "server/metrics.h"
#include "server/periodic.h"

namespace topofit::scheduler {

// topofit_idle_gpus{reason,node_group}: every known node's free GPUs by why they are idle
// (history/idle_gpus.h), from the GPU state and the ledger (holds of intents, pending preferences); a
// node not Ready yet has its free GPUs `booting`. The node group is the node's
// node-pool label (EKS, eksctl, GKE, AKS), else its instance type. Refresh recomputes; Start refreshes
// every `period` on a thread of its own until the object goes. With a recorder, each refresh also records
// (history::IdleRecord) every node whose idle GPUs changed since the last one — the history
// `topofit explain idle` and the MCP server tell.
class IdleGpusGauge {
 public:
  IdleGpusGauge(server::MetricsRegistry& registry, const GpuState& state, const ledger::Ledger& ledger);
  IdleGpusGauge(const IdleGpusGauge&) = delete;
  IdleGpusGauge& operator=(const IdleGpusGauge&) = delete;

  // Before Start: record the changes to `recorder` (not owned, outlives this), timed by `clock`.
  void RecordChangesTo(history::DecisionRecorder* recorder, const server::Clock* clock);
  void Refresh();
  void Start(absl::Duration period);

 private:
  server::Gauge& gauge_;
  const GpuState& state_;
  const ledger::Ledger& ledger_;
  std::set<std::pair<std::string, std::string>> shown_;  // (reason, node group) set by the last refresh
  history::DecisionRecorder* recorder_ = nullptr;
  const server::Clock* clock_ = nullptr;
  history::IdleRecords idle_records_;  // under mu_
  std::mutex mu_;
  std::unique_ptr<server::Periodic> refresher_;  // last: stopped before the rest goes
};

}  // namespace topofit::scheduler
