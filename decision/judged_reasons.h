#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "decision/capacity_ask.h"
#include "decision/capacity_hold.h"
#include "decision/filter.h"
#include "decision/node_snapshot.h"
#include "topology/topology.h"

namespace topofit::decision {

// JudgedReasonText (pod_filter.h) for the refused nodes of one pod's filter cycle, each distinct text built
// once. A filter request over thousands of nodes refuses most of them for the same few reasons, and
// building the words (the refusal, the best set, the origin) cost more than judging the node.
//
// Exact: a verdict refused by FilterNode itself (not by a hold or an ask) is FilterNode's for the cycle's
// one demand, a function of the node's topology and free GPUs only (filter.h), and its words add only the
// node's topology origin; so (topology, free GPUs, origin) names the text. The refusals of holds and asks
// read the node's name and the pod's holds, so they are built each time, as before.
// One per cycle: the cache assumes one pod and one demand, and that the snapshots outlive it (topologies
// are keyed by address).
class JudgedReasons {
 public:
  JudgedReasons(const JudgedPod& pod, const CapacityHolds& holds, const CapacityAsk* ask)
      : pod_(pod), holds_(holds), ask_(ask) {}

  // JudgedReasonText(verdict, pod, node, holds, ask), for a verdict of JudgeNode on `node`.
  std::string For(const NodeVerdict& verdict, const NodeGpuSnapshot& node);

 private:
  using Shape = std::pair<const topology::Topology*, uint32_t>;  // topology, free GPUs' mask
  const JudgedPod& pod_;
  const CapacityHolds& holds_;
  const CapacityAsk* ask_;
  // Per shape, the texts by origin (a group's nodes share one origin, so the list is short).
  absl::flat_hash_map<Shape, std::vector<std::pair<std::string, std::string>>> texts_;
};

}  // namespace topofit::decision
