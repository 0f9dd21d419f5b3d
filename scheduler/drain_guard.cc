#include "scheduler/drain_guard.h"

#include <memory>
#include <utility>
#include <vector>

#include "decision/scale_down_guard.h"
#include "kube/topofit_annotations.h"
#include "topology/set_quality.h"
#include "server/logging.h"

namespace topofit::scheduler {

DrainGuard::DrainGuard(const GpuState& state, KubeClient& kube, spdlog::logger& log,
                       server::MetricsRegistry& registry)
    : state_(state),
      kube_(kube),
      log_(log),
      pods_(registry.AddGauge("topofit_drain_guard_pods",
                              "Pods the drain guard tracks, by the safe-to-evict it gave them: false (kept from "
                              "cluster-autoscaler's scale-down) or unset",
                              {"safe_to_evict"})) {
  PublishLocked();  // both series from the start, at 0
}

DrainGuard::ReadyNodes::ReadyNodes(const GpuState& state) : snapshots(state.Snapshots()) {
  for (const auto& snapshot : snapshots) {
    if (snapshot->ready) nodes.push_back(snapshot.get());
  }
}

bool DrainGuard::KeepsNow(const decision::GpuDemand& demand, absl::string_view node) const {
  const ReadyNodes ready(state_);
  decision::FilterMemo memo;
  return !decision::AnotherNodeGivesItsTopology(demand, node, ready.nodes, memo);
}

void DrainGuard::Track(const PodRef& pod, std::string node, decision::GpuDemand demand, bool kept) {
  std::lock_guard<std::mutex> lock(mu_);
  tracked_[pod.uid] = Tracked{.pod = pod, .node = std::move(node), .demand = std::move(demand), .kept = kept,
                              .holders = {}, .judged = true, .unseen = 0};
  PublishLocked();
}

void DrainGuard::TrackClaims(const PodRef& pod, std::string node, decision::GpuDemand demand,
                             std::vector<std::string> holders) {
  std::lock_guard<std::mutex> lock(mu_);
  tracked_[pod.uid] = Tracked{.pod = pod, .node = std::move(node), .demand = std::move(demand), .kept = false,
                              .holders = std::move(holders), .judged = false, .unseen = 0};
  PublishLocked();
}

std::optional<topology::GpuSet> DrainGuard::HeldNow(const Tracked& pod) const {
  if (pod.holders.empty()) {
    const auto assignment = state_.AssignmentOf(pod.pod.uid);
    if (!assignment || assignment->first != pod.node) return std::nullopt;
    return assignment->second;
  }
  topology::GpuSet held;
  for (const std::string& holder : pod.holders) {
    const auto assignment = state_.AssignmentOf(holder);
    if (!assignment || assignment->first != pod.node) return std::nullopt;
    held = held | assignment->second;
  }
  return held;
}

void DrainGuard::Refresh() {
  std::vector<std::pair<Tracked, topology::GpuSet>> pods;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = tracked_.begin(); it != tracked_.end();) {
      const std::optional<topology::GpuSet> held = HeldNow(it->second);
      if (held) {
        pods.emplace_back(it++->second, *held);
      } else if (!it->second.judged && ++it->second.unseen < kClaimRefreshes) {
        ++it;  // the claim watch has not brought its devices yet
      } else {
        it = tracked_.erase(it);  // ended, deleted or moved: nothing of ours to keep
      }
    }
  }
  // One view of the nodes, and one memo, for every pod: nodes of one shape with the same GPUs free are
  // judged once per refresh.
  const ReadyNodes ready(state_);
  decision::FilterMemo memo;
  for (auto& [pod, held] : pods) {
    if (!pod.judged) {
      // A claim pod's set, now known: kept only if it got the topology it would refuse or wait for elsewhere.
      pod.demand.request.gpus = held.size();
      const std::shared_ptr<const decision::NodeGpuSnapshot> node = state_.Snapshot(pod.node);
      const bool guarded = node != nullptr && node->topology != nullptr &&
                           decision::KeepFromScaleDownDrain(pod.demand, node->topology->quality().Of(held));
      std::lock_guard<std::mutex> lock(mu_);
      auto it = tracked_.find(pod.pod.uid);
      if (it == tracked_.end()) continue;
      if (!guarded) {
        tracked_.erase(it);
        continue;
      }
      it->second.judged = true;
      it->second.demand = pod.demand;
    }
    const bool keep = !decision::AnotherNodeGivesItsTopology(pod.demand, pod.node, ready.nodes, memo);
    if (keep == pod.kept) continue;
    // Removing the key (not writing "true") leaves CA's own drain rules to decide, as before the bind.
    const absl::Status patched =
        keep ? kube_.AnnotatePod(pod.pod.namespace_name, pod.pod.name, {{std::string(kube::kSafeToEvictAnnotation), "false"}})
             : kube_.RemovePodAnnotation(pod.pod.namespace_name, pod.pod.name, std::string(kube::kSafeToEvictAnnotation));
    server::LogEvent(log_, "drain_guard",
                     {{"pod", pod.pod.key()},
                      {"node", pod.node},
                      {"safe_to_evict", keep ? "false" : "unset"},
                      {"result", patched.ok() ? std::string("ok") : std::string(patched.message())}},
                     patched.ok() ? spdlog::level::info : spdlog::level::warn);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = tracked_.find(pod.pod.uid);
    if (it == tracked_.end()) continue;
    if (patched.ok()) {
      it->second.kept = keep;
    } else if (absl::IsNotFound(patched)) {
      tracked_.erase(it);  // the pod is gone
    }  // else: tried again on the next refresh
  }
  std::lock_guard<std::mutex> lock(mu_);
  PublishLocked();
}

void DrainGuard::Start(absl::Duration period) {
  refresher_ = std::make_unique<server::Periodic>(period, [this] { Refresh(); });
}

void DrainGuard::PublishLocked() {
  int kept = 0;
  for (const auto& [uid, pod] : tracked_) kept += pod.kept;
  pods_.Set(kept, {"false"});
  pods_.Set(static_cast<double>(tracked_.size()) - kept, {"unset"});
}

}  // namespace topofit::scheduler
