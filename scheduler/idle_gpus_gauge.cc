#include "scheduler/idle_gpus_gauge.h"

#include <map>
#include <vector>

#include "decision/capacity_hold.h"
#include "decision/filter_memo.h"
#include "decision/node_group_identity.h"
#include "history/idle_gpus.h"

namespace topofit::scheduler {
namespace {

// What a pending pod with a preference asks: its shape, binding (it was refused at it).
decision::GpuDemand DemandOf(const decision::Preference& p) {
  decision::GpuDemand demand;
  demand.request.gpus = p.gpus;
  demand.request.min_link = p.min_link;
  demand.request.min_bandwidth_mbps = p.min_bandwidth_mbps;
  demand.policy = decision::TopologyPolicy::kRequired;
  return demand;
}

}  // namespace

IdleGpusGauge::IdleGpusGauge(server::MetricsRegistry& registry, const GpuState& state, const ledger::Ledger& ledger)
    : gauge_(registry.AddGauge("topofit_idle_gpus",
                               "Free GPUs of the known nodes by why they are idle: held-for-intent, "
                               "awaiting-scale-down, fragmented, no-demand (booting is not seen by the extender)",
                               {"reason", "node_group"})),
      state_(state),
      ledger_(ledger) {}

IdleGpusGauge::~IdleGpusGauge() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void IdleGpusGauge::Refresh() {
  const std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> snapshots = state_.Snapshots();
  std::vector<const decision::NodeGpuSnapshot*> nodes;
  for (const auto& s : snapshots) nodes.push_back(s.get());
  const std::vector<decision::Preference> preferences = ledger_.Preferences();
  const decision::CapacityHolds holds(ledger_.Intents(), preferences, nodes);
  std::vector<decision::GpuDemand> pending;
  for (const decision::Preference& p : preferences) pending.push_back(DemandOf(p));
  decision::FilterMemo memo;
  std::map<std::pair<std::string, std::string>, int> counts;
  for (const decision::NodeGpuSnapshot* node : nodes) {
    const history::IdleCounts idle =
        history::ClassifyIdleGpus(*node, /*ready=*/true, holds.HeldAgainst("", *node), pending, memo);
    const std::string group = decision::NodeGroupName(node->origin->labels);
    for (size_t r = 0; r < history::kIdleReasons; ++r) {
      if (idle[r] > 0) counts[{std::string(history::IdleReasonName(static_cast<history::IdleReason>(r))), group}] += idle[r];
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
}

void IdleGpusGauge::Start(absl::Duration period) {
  thread_ = std::thread([this, period] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      lock.unlock();
      Refresh();
      lock.lock();
      wake_.wait_for(lock, absl::ToChronoMilliseconds(period), [this] { return stop_; });
    }
  });
}

}  // namespace topofit::scheduler
