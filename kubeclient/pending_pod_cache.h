#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "kube/objects.h"
#include "kubeclient/list_watcher.h"
#include "scheduler/pending_pods.h"

namespace topofit::kubeclient {

// The pending pods of one scheduler, fed by ListWatcher::ForPods with PendingPodsSelector(name): the
// scheduler::PendingPods a bind reads instead of GETting its pod. A pod leaves when it is bound or
// deleted (the API server sends a pod that stops matching the selector as DELETED), so the cache holds
// what kube-scheduler's own queue holds, one shared copy per pod. Thread-safe.
class PendingPodCache : public scheduler::PendingPods {
 public:
  WatchHandler<kube::Pod> Handler();
  void Sync(const std::vector<kube::Pod>& pods);
  void Changed(WatchEventType type, const kube::Pod& pod);

  std::shared_ptr<const kube::Pod> Find(absl::string_view namespace_name, absl::string_view name) const override;
  size_t size() const;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const kube::Pod>> pods_ ABSL_GUARDED_BY(mu_);  // by namespace/name
};

// The field selector of the pods waiting for `scheduler_name`: not bound, and theirs.
std::string PendingPodsSelector(absl::string_view scheduler_name);

}  // namespace topofit::kubeclient
