#pragma once

#include <memory>

#include "absl/strings/string_view.h"
#include "kube/objects.h"

namespace topofit::scheduler {

// The pods waiting for topofit's scheduler, as a watch of the API server last saw them
// (kubeclient/pending_pod_cache.h). A bind reads its pod here rather than GETting it: at kube-scheduler's
// client defaults (50 QPS, burst 100) a bind that costs one API call instead of two binds a burst of 100
// pods in one go. What makes the watch's copy good enough: the fields a bind reads (uid, schedulerName,
// the GPU request, the topology annotations written at creation) do not change while a pod is pending,
// and the Binding carries the uid as a precondition, so a pod deleted and recreated under the same name
// since the watch saw it is refused by the API server rather than bound as the old one.
class PendingPods {
 public:
  virtual ~PendingPods() = default;
  // The pending pod of that name, or null when the watch holds none.
  virtual std::shared_ptr<const kube::Pod> Find(absl::string_view namespace_name, absl::string_view name) const = 0;
};

}  // namespace topofit::scheduler
