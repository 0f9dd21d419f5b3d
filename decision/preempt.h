#pragma once

#include <optional>
#include <string>
#include <vector>

#include "decision/node_snapshot.h"
#include "decision/pod_demand.h"

namespace topofit::decision {

// kube-scheduler proposes `victims` (pod uids) on a node; keep only those whose eviction is needed to
// free a GPU set that meets the pod's enforced request, or decline the node (nullopt) when even all of
// them would not. Victims are reprieved in the order given (kube-scheduler's, most important first is
// not assumed) when the pod still fits without evicting them. Victims holding no GPUs topofit knows of
// are kept: they may be needed for CPU or memory, which kube-scheduler judged, not topofit.
std::optional<std::vector<std::string>> TrimVictims(const GpuDemand& demand, const NodeGpuSnapshot& node,
                                                    const std::vector<std::string>& victims);

}  // namespace topofit::decision
