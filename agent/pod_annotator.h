#pragma once

// Writes annotations on the node's pods off the gRPC path: the kubelet's Allocate must not wait for the API
// server. Per pod, only the latest value of each key is written (one merge patch with everything pending);
// a failed patch is retried with backoff, a pod that is gone (404) is dropped.

#include <map>
#include <string>

#include <spdlog/logger.h>

#include "absl/synchronization/mutex.h"
#include "kube/objects.h"
#include "kubeclient/coalescing_queue.h"
#include "kubeclient/kube_api.h"

namespace topofit::agent {

class PodAnnotator {
 public:
  // `kube` and `log` must outlive this object.
  PodAnnotator(kubeclient::KubeApi& kube, spdlog::logger& log);

  void Set(const std::string& namespace_name, const std::string& name, const std::string& key,
           const std::string& value);
  // Waits up to `timeout` until every pending patch has been written; true when none is left.
  bool WaitIdle(absl::Duration timeout) const { return queue_.WaitIdle(timeout); }
  void Stop() { queue_.Stop(); }

 private:
  kubeclient::CoalescingQueue::Outcome Write(const std::string& pod_key);

  kubeclient::KubeApi& kube_;
  spdlog::logger& log_;
  absl::Mutex mu_;
  std::map<std::string, kube::StringMap> pending_ ABSL_GUARDED_BY(mu_);  // by "namespace/name"
  kubeclient::CoalescingQueue queue_;  // last: its worker reads the members above
};

}  // namespace topofit::agent
