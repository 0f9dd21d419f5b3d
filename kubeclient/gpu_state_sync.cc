#include "kubeclient/gpu_state_sync.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "kube/pod_resources.h"
#include "decision/pod_demand.h"
#include "server/logging.h"
#include "topology/gpu_set.h"

namespace topofit::kubeclient {
namespace {

bool Finished(const kube::Pod& pod) { return pod.status.phase == "Succeeded" || pod.status.phase == "Failed"; }

}  // namespace

WatchHandler<kube::Node> GpuStateSync::NodeHandler() {
  return WatchHandlerOf(*this, &GpuStateSync::SyncNodes, &GpuStateSync::NodeChanged);
}

WatchHandler<kube::Pod> GpuStateSync::PodHandler() {
  return WatchHandlerOf(*this, &GpuStateSync::SyncPods, &GpuStateSync::PodChanged);
}

void GpuStateSync::SyncNodes(const std::vector<kube::Node>& nodes) {
  absl::MutexLock lock(&mu_);
  ++stats_.node_syncs;
  std::set<std::string, std::less<>> listed;
  for (const kube::Node& node : nodes) listed.insert(node.metadata.name);
  std::vector<std::string> vanished;
  for (const std::string& name : nodes_) {
    if (!listed.contains(name)) vanished.push_back(name);
  }
  for (const std::string& name : vanished) RemoveNodeLocked(name);
  for (const kube::Node& node : nodes) UpsertNodeLocked(node);
}

void GpuStateSync::NodeChanged(WatchEventType type, const kube::Node& node) {
  absl::MutexLock lock(&mu_);
  if (type == WatchEventType::kDeleted) {
    RemoveNodeLocked(node.metadata.name);
  } else {
    UpsertNodeLocked(node);
  }
}

void GpuStateSync::SyncPods(const std::vector<kube::Pod>& pods) {
  absl::MutexLock lock(&mu_);
  ++stats_.pod_syncs;
  std::set<std::string, std::less<>> listed;
  for (const kube::Pod& pod : pods) listed.insert(pod.metadata.uid);
  std::vector<std::string> vanished;
  for (const auto& [uid, holding] : pods_) {
    if (!listed.contains(uid)) vanished.push_back(uid);
  }
  for (const std::string& uid : vanished) ForgetPodLocked(uid);
  for (const kube::Pod& pod : pods) UpdatePodLocked(pod);
}

void GpuStateSync::PodChanged(WatchEventType type, const kube::Pod& pod) {
  absl::MutexLock lock(&mu_);
  if (type == WatchEventType::kDeleted) {
    ForgetPodLocked(pod.metadata.uid);
  } else {
    UpdatePodLocked(pod);
  }
}

GpuStateSyncStats GpuStateSync::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

std::optional<GpuStateSync::Holding> GpuStateSync::HoldingOf(const kube::Pod& pod) {
  if (pod.metadata.uid.empty() || pod.spec.node_name.empty() || Finished(pod)) return std::nullopt;
  const absl::StatusOr<int> gpus = kube::GpuRequest(pod);
  if (!gpus.ok()) {
    ++stats_.bad_gpu_requests;
    server::LogEvent(log_, "live_state_bad_gpu_request",
                     {{"pod", absl::StrCat(pod.metadata.namespace_name, "/", pod.metadata.name)},
                      {"error", std::string(gpus.status().message())}},
                     spdlog::level::warn);
    return std::nullopt;
  }
  if (*gpus <= 0) return std::nullopt;
  Holding holding;
  holding.pod = scheduler::PodRef{pod.metadata.uid, pod.metadata.namespace_name, pod.metadata.name};
  holding.node = pod.spec.node_name;
  holding.gpus = *gpus;
  if (auto it = pod.metadata.annotations.find(kube::kGpuIdsAnnotation);
      it != pod.metadata.annotations.end()) {
    holding.has_ids = true;
    holding.ids = it->second;
  }
  return holding;
}

void GpuStateSync::UpsertNodeLocked(const kube::Node& node) {
  const std::string& name = node.metadata.name;
  if (absl::Status upserted = state_.UpsertNode(node, scheduler::NodeSource::kWatch); !upserted.ok()) {
    ++stats_.nodes_rejected;
    server::LogEvent(log_, "live_state_node_rejected", {{"node", name}, {"error", std::string(upserted.message())}},
                     spdlog::level::warn);
    return;
  }
  nodes_.insert(name);
  // Pods that arrived before their node (or while it was gone) are observed now.
  for (auto& [uid, holding] : pods_) {
    if (holding.node == name && !holding.applied) Apply(holding);
  }
}

void GpuStateSync::RemoveNodeLocked(const std::string& node) {
  if (nodes_.erase(node) == 0) return;
  state_.RemoveNode(node);  // drops what its pods held; they are kept here, to be observed if it returns
  for (auto& [uid, holding] : pods_) {
    if (holding.node == node) holding.applied = false;
  }
}

void GpuStateSync::UpdatePodLocked(const kube::Pod& pod) {
  const std::string& uid = pod.metadata.uid;
  std::optional<Holding> holding = HoldingOf(pod);
  if (!holding) {
    // A finished pod releases whatever it holds, even GPUs the extender assumed for it. A pod that is not
    // bound yet is left alone unless this feed saw it hold GPUs: the extender assumes before it annotates
    // and binds, so the annotation's MODIFIED arrives while the pod is still unbound.
    if (Finished(pod) || pods_.contains(uid)) ForgetPodLocked(uid);
    return;
  }
  auto it = pods_.find(uid);
  if (it != pods_.end() && it->second.applied && it->second.same_as(*holding)) return;  // nothing new
  Holding& tracked = pods_.insert_or_assign(uid, *std::move(holding)).first->second;
  Apply(tracked);
}

void GpuStateSync::ForgetPodLocked(const std::string& uid) {
  // Also for a pod never tracked here: a deleted or finished pod releases GPUs the extender assumed for
  // it even when the watch never saw it bound.
  pods_.erase(uid);
  if (!uid.empty() && state_.Forget(uid)) ++stats_.pods_forgotten;
}

void GpuStateSync::Apply(Holding& holding) {
  holding.applied = false;
  const std::shared_ptr<const decision::NodeGpuSnapshot> snapshot = state_.Snapshot(holding.node);
  if (snapshot == nullptr) return;  // observed when the node arrives
  std::optional<topology::GpuSet> ids;
  if (holding.has_ids) {
    absl::StatusOr<topology::GpuSet> parsed = topology::GpuSet::Parse(holding.ids, snapshot->topology->gpu_count());
    if (parsed.ok() && parsed->size() == holding.gpus) {
      ids = *parsed;
    } else {
      ++stats_.bad_gpu_ids;
      server::LogEvent(log_, "live_state_bad_gpu_ids",
                       {{"pod", holding.pod.key()},
                        {"node", holding.node},
                        {"gpu_ids", holding.ids},
                        {"gpus", holding.gpus},
                        {"error", parsed.ok() ? "count differs from the GPU request"
                                              : std::string(parsed.status().message())}},
                       spdlog::level::warn);
    }
  }
  const absl::Status observed = state_.ObservePod(holding.pod, holding.node, holding.gpus, ids);
  if (observed.ok()) {
    holding.applied = true;
    ++stats_.pods_observed;
    return;
  }
  if (absl::IsNotFound(observed)) return;  // the node went away meanwhile
  ++stats_.pods_rejected;
  server::LogEvent(log_, "live_state_pod_rejected",
                   {{"pod", holding.pod.key()}, {"node", holding.node}, {"error", std::string(observed.message())}},
                   spdlog::level::warn);
}

}  // namespace topofit::kubeclient
