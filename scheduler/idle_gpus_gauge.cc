#include "scheduler/idle_gpus_gauge.h"

#include <array>
#include <map>
#include <vector>

#include "absl/strings/string_view.h"
#include "decision/capacity_hold.h"
#include "decision/filter_memo.h"
#include "history/idle_gpus.h"

namespace topofit::scheduler {
namespace {

std::string NodeGroupOf(const decision::NodeGpuSnapshot& node) {
  static constexpr std::array<absl::string_view, 6> kKeys = {
      "eks.amazonaws.com/nodegroup",    "alpha.eksctl.io/nodegroup-name", "cloud.google.com/gke-nodepool",
      "kubernetes.azure.com/agentpool", "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"};
  for (absl::string_view key : kKeys) {
    if (auto it = node.origin->labels.find(std::string(key)); it != node.origin->labels.end()) return it->second;
  }
  return "";
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
  for (const decision::Preference& p : preferences) pending.push_back(history::PreferredDemand(p));
  decision::FilterMemo memo;
  // The extender does not see node readiness: every node it knows counts as Ready.
  const std::vector<history::IdleCounts> idle =
      history::ClassifyNodes(nodes, std::vector<bool>(nodes.size(), true), holds, pending, memo);
  std::map<std::pair<std::string, std::string>, int> counts;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string group = NodeGroupOf(*nodes[i]);
    for (size_t r = 0; r < history::kIdleReasons; ++r) {
      if (idle[i][r] > 0) {
        counts[{std::string(history::IdleReasonName(static_cast<history::IdleReason>(r))), group}] += idle[i][r];
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
