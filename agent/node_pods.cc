#include "agent/node_pods.h"

#include "kube/topofit_annotations.h"

namespace topofit::agent {

std::optional<ChosenPod> ChoiceOf(const kube::Pod& pod, const topology::Topology& topology) {
  const kube::StringMap& annotations = pod.metadata.annotations;
  const auto ids = annotations.find(kube::kGpuIdsAnnotation);
  if (ids == annotations.end()) return std::nullopt;
  absl::StatusOr<topology::GpuSet> chosen = topology::GpuSet::Parse(ids->second, topology.gpu_count());
  if (!chosen.ok() || chosen->empty()) return std::nullopt;
  ChosenPod choice;
  choice.key = pod.metadata.namespace_name + "/" + pod.metadata.name;
  choice.uid = pod.metadata.uid;
  choice.created_seconds = pod.metadata.creation_timestamp_seconds;
  choice.chosen = *chosen;
  if (const auto bound = annotations.find(kube::kBoundAtAnnotation); bound != annotations.end()) {
    absl::Time at;
    std::string error;
    if (absl::ParseTime(absl::RFC3339_full, bound->second, &at, &error)) choice.bound_at = at;
  }
  return choice;
}

kubeclient::WatchHandler<kube::Pod> NodePods::Handler() {
  return kubeclient::WatchHandlerOf(*this, &NodePods::Sync, &NodePods::Changed);
}

void NodePods::Sync(const std::vector<kube::Pod>& pods) {
  absl::MutexLock lock(&mu_);
  pods_.clear();
  for (const kube::Pod& pod : pods) pods_[pod.metadata.uid] = pod;
  for (auto it = given_.begin(); it != given_.end();) it = pods_.count(*it) > 0 ? std::next(it) : given_.erase(it);
}

void NodePods::Changed(kubeclient::WatchEventType type, const kube::Pod& pod) {
  absl::MutexLock lock(&mu_);
  if (type == kubeclient::WatchEventType::kDeleted) {
    pods_.erase(pod.metadata.uid);
    given_.erase(pod.metadata.uid);
  } else {
    pods_[pod.metadata.uid] = pod;
  }
}

std::vector<ChosenPod> NodePods::Waiting(const topology::Topology& topology) const {
  std::vector<ChosenPod> waiting;
  absl::MutexLock lock(&mu_);
  for (const auto& [uid, pod] : pods_) {
    if (given_.count(uid) > 0 || pod.metadata.has_deletion_timestamp) continue;
    if (!pod.status.phase.empty() && pod.status.phase != "Pending") continue;
    if (pod.metadata.annotations.count(kube::kGpuAllocatedAnnotation) > 0) continue;
    if (std::optional<ChosenPod> choice = ChoiceOf(pod, topology)) waiting.push_back(*std::move(choice));
  }
  SortInBindOrder(waiting);
  return waiting;
}

void NodePods::MarkGiven(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  given_.insert(uid);
}

std::optional<kube::Pod> NodePods::Find(const std::string& namespace_name, const std::string& name) const {
  absl::MutexLock lock(&mu_);
  for (const auto& [uid, pod] : pods_) {
    if (pod.metadata.namespace_name == namespace_name && pod.metadata.name == name) return pod;
  }
  return std::nullopt;
}

size_t NodePods::size() const {
  absl::MutexLock lock(&mu_);
  return pods_.size();
}

}  // namespace topofit::agent
