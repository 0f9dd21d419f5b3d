#pragma once

// How an operator tunes the stock world for pods that need a GPU topology (the `tuned` baselines,
// docs/bench.md): node affinity to the node groups whose shape can give the topology, and a priority
// expander ConfigMap preferring the NVLink groups. Both are derived from the node groups' shapes through
// the topology catalog, never from a workload's pod names, so every workload gets the same rule.

#include <optional>
#include <string>
#include <vector>

#include "replay/world.h"
#include "kube/objects.h"
#include "topology/allocator.h"

namespace topofit::sim {

// The required node affinity an operator writes for `pod`, whose `request` (GPU count and the min-link /
// min-bandwidth it requires) must be met: decision::TopologyAffinity over the groups' templates and
// shapes, the rule topofit's admission webhook applies. nullopt when no group can give the topology: an
// operator cannot pin such a pod anywhere, and it keeps the affinity it had.
std::optional<kube::NodeSelector> OperatorAffinity(const kube::Pod& pod, const topology::AllocationRequest& request,
                                                   const std::vector<GroupState>& groups);

// The preferred node affinity an operator writes for `pod`, which only prefers `request`: the terms
// OperatorAffinity would require, each a preference of weight 100 (kube-scheduler's NodeAffinity plugin
// scores a node by the weights of the terms it matches). Empty when no group can give the topology.
std::vector<kube::PreferredSchedulingTerm> OperatorPreferredAffinity(const kube::Pod& pod,
                                                                     const topology::AllocationRequest& request,
                                                                     const std::vector<GroupState>& groups);

// Whether an empty node of the group gives a set that meets `request` (decision::CanGiveTopology).
bool CanGiveTopology(const GroupState& group, const topology::AllocationRequest& request);

// Whether the group's nodes have NVLink between their GPUs (directly or through an NVSwitch): a 2-GPU pod
// with min-link NV fits an empty node. What an operator means by "the NVLink nodes" (SXM boards: HGX
// H100/A100 with NVSwitch, DGX-1's cube mesh), as against PCIe cards.
bool IsNvlinkGroup(const GroupState& group);

// The text of the `priorities` key of CA's `cluster-autoscaler-priority-expander` ConfigMap an operator
// writes to prefer the NVLink groups: priority 20 for every IsNvlinkGroup (their names anchored and
// escaped), 10 for every group (`.*`). Without an NVLink group, only the 10.
std::string NvlinkPrioritiesYaml(const std::vector<GroupState>& groups);

}  // namespace topofit::sim
