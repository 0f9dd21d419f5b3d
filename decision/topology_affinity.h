#pragma once

// The required node affinity that tells cluster-autoscaler which node groups can serve a pod that requires
// a GPU topology. CA's scale-up simulation checks a pod's node affinity against each group's template node
// but counts GPUs only and never calls the extender, so without it CA may grow a group whose nodes the
// extender then refuses. One rule for the admission webhook (webhook/) and the bench's tuned operator
// (replay/operator_tuning.h).

#include <optional>
#include <vector>

#include "kube/objects.h"
#include "topology/allocator.h"
#include "topology/topology.h"

namespace topofit::decision {

// A node group as the decisions see it: its template node and the topology resolved for it
// (TopologySource), nullptr for a group without GPUs or whose topology is unknown. Both point into what
// the caller keeps for the call.
struct GroupShape {
  const kube::Node* template_node = nullptr;
  const topology::Topology* topology = nullptr;
};

// Whether an empty node of `topology` gives a set that meets `request` (GPU count, min-link,
// min-bandwidth); false for a null topology.
bool CanGiveTopology(const topology::Topology* topology, const topology::AllocationRequest& request);

// The terms (any one may match) naming the groups that can give `pod`, whose `request` must be met, its
// GPUs: one term per group the pod may already use (its own node selector and required affinity, its
// tolerations) whose shape CanGiveTopology, naming the group's nodes by ShapeTerm (the instance type when
// the template has one, else the GPU product and count); deduplicated, in group order. Empty when no group
// can give the topology.
std::vector<kube::NodeSelectorTerm> TopologyShapeTerms(const kube::Pod& pod, const topology::AllocationRequest& request,
                                                       const std::vector<GroupShape>& groups);

// The required node affinity that keeps `pod` on those groups: TopologyShapeTerms, each ANDed with each of
// the pod's own required terms. nullopt when no group can give the topology: no affinity can help such a
// pod, and it keeps the one it had.
std::optional<kube::NodeSelector> TopologyAffinity(const kube::Pod& pod, const topology::AllocationRequest& request,
                                                   const std::vector<GroupShape>& groups);

}  // namespace topofit::decision
