#pragma once

#include <string>
#include <vector>

#include "kube/objects.h"
#include "scheduler/pod_ref.h"

namespace topofit::scheduler {

// Asks cluster-autoscaler for capacity a pending GPU pod can use when the existing nodes that could take it
// by count refused it for topology (or held GPUs): CA's own simulation counts GPUs only, would place the
// pod on those nodes, and so would never scale up for it. In a cluster: a ProvisioningRequest
// (kubeclient/provisioner.h). Implementations work in the background: the extender calls them on its
// filter and bind paths and must not wait on the API.
// Where the capacity asked for a pod may be: not on the nodes that refused it, and, when `shapes` is not
// empty, only on nodes of one of those shapes (decision/capacity_shapes.h: those that give the set it asks).
struct CapacityPlacement {
  std::vector<std::string> refused_nodes;
  std::vector<kube::NodeSelectorTerm> shapes;  // ORed; empty: any shape
};

class CapacityRequests {
 public:
  virtual ~CapacityRequests() = default;
  // The pod found no node; `where.refused_nodes` refused it. Once per pod until withdrawn: later calls for
  // a pod already asked for are no-ops.
  virtual void RequestFor(const PodRef& pod, const CapacityPlacement& where) = 0;
  // The pod was bound or is gone: its request has served, or is moot.
  virtual void Withdraw(const PodRef& pod) = 0;
};

}  // namespace topofit::scheduler
