#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "kube/objects.h"
#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::decision {

// Where a node came from: its labels and creation time tell which scale-up brought it
// (node_group_identity.h).
struct NodeOrigin {
  kube::StringMap labels;
  int64_t created_seconds = 0;  // Unix seconds; 0 when unknown
};

// An immutable view of one node's GPUs, for decisions. Built when the node's state changes, shared by
// every request that reads it.
struct NodeGpuSnapshot {
  std::string node;
  std::shared_ptr<const topology::Topology> topology;
  std::string topology_origin;  // decision::NodeTopology's origin and reason: where the topology came from
  std::string topology_reason;
  std::shared_ptr<const NodeOrigin> origin;  // never null
  bool ready = true;           // kube::NodeIsReady: false while a new node boots (its idle GPUs are `booting`)
  topology::GpuSet ours;       // assigned by topofit (assumed at bind, or reported with their ids)
  topology::GpuSet elsewhere;  // held by other pods or not allocatable; positions assumed when unknown
  std::map<std::string, topology::GpuSet, std::less<>> by_pod;  // pod uid -> GPUs, where known
  // No device plugin offers nvidia.com/gpu here; NVIDIA's DRA driver's slices do. A pod's nvidia.com/gpu is
  // then served by a claim kube-scheduler makes for it (KEP-5004), whose devices its allocator picks.
  bool gpus_through_dra = false;
  topology::GpuSet free() const { return topology->all_gpus().without(ours | elsewhere); }
};

// Judging thousands of snapshots in a row (a NodeNames request, a prioritize) is bound by their cache
// misses, one snapshot after another. Asking for the fields FilterNode reads (the topology and the
// occupied GPUs) of the node kPrefetchAhead places on lets that miss overlap the work on the nodes before.
inline constexpr size_t kPrefetchAhead = 8;
inline void PrefetchForJudging(const NodeGpuSnapshot& node) {
  __builtin_prefetch(&node.topology);
  __builtin_prefetch(&node.elsewhere);
}
// What telling a refused node's reason reads (judged_reasons.h: its shape and its topology's origin, whose
// text lies apart from the snapshot); after judging thousands of nodes the first ones have left the cache.
inline void PrefetchForReasons(const NodeGpuSnapshot& node) {
  PrefetchForJudging(node);
  __builtin_prefetch(node.topology_origin.data());
}

}  // namespace topofit::decision
