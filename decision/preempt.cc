#include "decision/preempt.h"

#include "topology/allocator.h"

namespace topofit::decision {
namespace {

bool FitsWith(const GpuDemand& demand, const NodeGpuSnapshot& node, topology::GpuSet free) {
  absl::StatusOr<topology::FitResult> fit = topology::Fit(*node.topology, free, EnforcedRequest(demand));
  return fit.ok() && fit->fits();
}

}  // namespace

std::optional<std::vector<std::string>> TrimVictims(const GpuDemand& demand, const NodeGpuSnapshot& node,
                                                    const std::vector<std::string>& victims) {
  if (!demand.wants_gpus()) return victims;
  topology::GpuSet freed = node.free();
  for (const std::string& uid : victims) {
    if (auto it = node.by_pod.find(uid); it != node.by_pod.end()) freed = freed | it->second;
  }
  if (!FitsWith(demand, node, freed)) return std::nullopt;

  std::vector<std::string> kept;
  for (const std::string& uid : victims) {
    auto it = node.by_pod.find(uid);
    if (it == node.by_pod.end() || it->second.empty()) {
      kept.push_back(uid);
      continue;
    }
    const topology::GpuSet without = freed.without(it->second);
    if (FitsWith(demand, node, without)) {
      freed = without;  // reprieved: the pod fits without evicting this victim
    } else {
      kept.push_back(uid);
    }
  }
  return kept;
}

}  // namespace topofit::decision
