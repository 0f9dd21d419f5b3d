#pragma once

#include <cstdint>

#include "decision/filter.h"
#include "decision/node_snapshot.h"
#include "decision/pod_demand.h"

namespace topofit::decision {

// kube-scheduler's extender score bounds (MinExtenderPriority, MaxExtenderPriority).
inline constexpr int64_t kMinExtenderScore = 0;
inline constexpr int64_t kMaxExtenderScore = 10;

// topology::NodeFitScore (0..100) of the set FilterNode chose, judged against what the pod asks for
// (min-link, min-bandwidth, binding or only preferred), rescaled to 0..10: a node whose set meets the ask
// scores above every node whose set does not, across node types. Pods without GPUs get
// kMinExtenderScore on every node: neutral, since the scheduler adds the same to all. A node that cannot
// give the pod a set scores kMinExtenderScore.
int64_t PrioritizeScore(const GpuDemand& demand, const NodeVerdict& filtered, const topology::Topology& topology);

// PrioritizeScore of FilterNode(demand, node).
int64_t PrioritizeNode(const GpuDemand& demand, const NodeGpuSnapshot& node);

}  // namespace topofit::decision
