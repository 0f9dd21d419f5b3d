#pragma once

#include "topology/allocator.h"
#include "topology/topology.h"

namespace topofit::topology {

inline constexpr int kMinNodeScore = 0;
inline constexpr int kMaxNodeScore = 100;

// How good a node is for a pod, given the allocation the allocator would make there: an integer in
// [kMinNodeScore, kMaxNodeScore] (the extender rescales it to kube-scheduler's 0..10). Weighted, in per
// mille, from three parts:
//   60% quality:  the set's bandwidth / the best bandwidth a set of that size reaches on an empty node of
//                 this shape (1 for a single GPU): a node that can give the pod what its shape promises;
//                 0 when the set misses the min-link or min-bandwidth of `asked`, so that a node that can
//                 give a pod the topology it asks for (even only prefers) outscores every node that
//                 cannot, whatever their shapes.
//   25% packing:  the share of the node's GPUs in use after placement: filling busy nodes keeps empty
//                 nodes, the largest blocks of the cluster, whole.
//   15% cohesion: the leftover's pair bandwidth sum / (its pairs x the node's best pair): what stays free
//                 stays well connected (1 when at most one GPU stays free).
int NodeFitScore(const Topology& topology, const Allocation& allocation, const AllocationRequest& asked = {});

}  // namespace topofit::topology
