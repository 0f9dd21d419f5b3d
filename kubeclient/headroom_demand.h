#pragma once

// What topofit's headroom controller knows of demand (docs/headroom.md): the live GPU pods of each shape —
// pending or running, not finished and not being deleted; the controller's own placeholders are not demand
// — and one pod of each shape to shape its buffer after. Fed by a watch of every pod (ListWatcher on
// /api/v1/pods, as the API server's JSON). Thread-safe: the watch writes, the controller's loop reads.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/synchronization/mutex.h"
#include "decision/headroom_plan.h"
#include "kubeclient/list_watcher.h"

namespace topofit::kubeclient {

class HeadroomDemand {
 public:
  // For a ListWatcher of /api/v1/pods.
  ListWatcher::Sink Sink();

  std::map<decision::HeadroomShape, int> Live() const;
  // What scheduling reads of the newest pod seen of `shape` (SchedulingTemplateOf); nullopt before any.
  std::optional<nlohmann::json> Exemplar(const decision::HeadroomShape& shape) const;

 private:
  struct LivePod {
    std::string uid;
    decision::HeadroomShape shape;
  };
  // The pod's uid and shape if it is live demand; nullopt otherwise. False when it does not decode.
  static bool Judge(const nlohmann::json& pod, std::optional<LivePod>& live);
  void Remember(const LivePod& pod, const nlohmann::json& json) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, decision::HeadroomShape> live_ ABSL_GUARDED_BY(mu_);     // by pod uid
  std::map<std::string, decision::HeadroomShape> listing_ ABSL_GUARDED_BY(mu_);  // a LIST in progress
  std::map<decision::HeadroomShape, nlohmann::json> exemplars_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topofit::kubeclient
