#pragma once

// The pods bound to this node, from a watch of pods with the field selector spec.nodeName=<node>: the pods
// waiting for their chosen GPUs (pod_choice.h) and the pods the pod-resources correction patches.
//
// A pod waits for its GPUs while it is Pending (the kubelet allocates devices at admission, before any
// container starts), carries a `topofit.io/gpu-ids` that parses against the node's topology, and has no
// `topofit.io/gpu-allocated` yet. The agent marks a pod as given at once, before its annotation is written
// and comes back through the watch, so the next admission cannot match it again.
//
// Thread-safe: the watch's thread writes, the gRPC handlers read.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "agent/pod_choice.h"
#include "kube/objects.h"
#include "kubeclient/list_watcher.h"
#include "topology/topology.h"

namespace topofit::agent {

// The pod as a choice, if it carries one that parses on `topology`; the bind time from
// `topofit.io/bound-at` (a missing or garbled one sorts last).
std::optional<ChosenPod> ChoiceOf(const kube::Pod& pod, const topology::Topology& topology);

class NodePods {
 public:
  kubeclient::WatchHandler<kube::Pod> Handler();
  void Sync(const std::vector<kube::Pod>& pods);
  void Changed(kubeclient::WatchEventType type, const kube::Pod& pod);

  // The pods waiting for their GPUs, in bind order.
  std::vector<ChosenPod> Waiting(const topology::Topology& topology) const;
  void MarkGiven(const std::string& uid);
  // By namespace and name; nullopt when not bound here (or not seen yet).
  std::optional<kube::Pod> Find(const std::string& namespace_name, const std::string& name) const;
  size_t size() const;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, kube::Pod> pods_ ABSL_GUARDED_BY(mu_);  // by uid
  std::set<std::string> given_ ABSL_GUARDED_BY(mu_);           // uids, until the pod is gone
};

}  // namespace topofit::agent
