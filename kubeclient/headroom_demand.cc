#include "kubeclient/headroom_demand.h"

#include <utility>

#include "codec/kube_json.h"
#include "kube/topofit_annotations.h"
#include "kubeclient/capacity_buffers.h"
#include "kubeclient/provisioning.h"

namespace topofit::kubeclient {

bool HeadroomDemand::Judge(const nlohmann::json& json, std::optional<LivePod>& live) {
  live.reset();
  absl::StatusOr<kube::Pod> pod = codec::PodFromJson(json);
  if (!pod.ok()) return false;
  if (IsHeadroomPlaceholder(json) || pod->metadata.has_deletion_timestamp || pod->metadata.uid.empty()) return true;
  if (pod->status.phase == "Succeeded" || pod->status.phase == "Failed") return true;
  if (std::optional<decision::HeadroomShape> shape = decision::HeadroomShapeOf(*pod)) {
    live = LivePod{pod->metadata.uid, *std::move(shape)};
  }
  return true;
}

void HeadroomDemand::Remember(const LivePod& pod, const nlohmann::json& json) {
  exemplars_[pod.shape] = SchedulingTemplateOf(
      json, {kube::kMinLinkAnnotation, kube::kMinBandwidthAnnotation, kube::kTopologyPolicyAnnotation});
}

ListWatcher::Sink HeadroomDemand::Sink() {
  ListWatcher::Sink sink;
  sink.on_list_page = [this](std::vector<nlohmann::json> page, bool first) {
    int64_t undecodable = 0;
    absl::MutexLock lock(&mu_);
    if (first) listing_.clear();
    for (const nlohmann::json& json : page) {
      std::optional<LivePod> live;
      if (!Judge(json, live)) {
        ++undecodable;
      } else if (live) {
        listing_[live->uid] = live->shape;
        Remember(*live, json);
      }
    }
    return undecodable;
  };
  sink.on_sync = [this] {
    absl::MutexLock lock(&mu_);
    live_.swap(listing_);
    listing_.clear();
  };
  sink.on_event = [this](WatchEventType type, const nlohmann::json& json) {
    std::optional<LivePod> live;
    if (!Judge(json, live)) return false;
    absl::MutexLock lock(&mu_);
    if (type == WatchEventType::kDeleted || !live) {
      // Gone, finished, being deleted or without GPUs now: no longer demand (a uid-less object never was).
      const auto metadata = json.find("metadata");
      if (metadata != json.end() && metadata->is_object()) live_.erase(metadata->value("uid", ""));
      return true;
    }
    live_[live->uid] = live->shape;
    Remember(*live, json);
    return true;
  };
  return sink;
}

std::map<decision::HeadroomShape, int> HeadroomDemand::Live() const {
  std::map<decision::HeadroomShape, int> live;
  absl::MutexLock lock(&mu_);
  for (const auto& [uid, shape] : live_) ++live[shape];
  return live;
}

std::optional<nlohmann::json> HeadroomDemand::Exemplar(const decision::HeadroomShape& shape) const {
  absl::MutexLock lock(&mu_);
  const auto it = exemplars_.find(shape);
  if (it == exemplars_.end()) return std::nullopt;
  return it->second;
}

}  // namespace topofit::kubeclient
