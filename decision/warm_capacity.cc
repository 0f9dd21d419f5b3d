#include "decision/warm_capacity.h"

#include <algorithm>

#include "decision/prioritize.h"
#include "topology/allocator.h"

namespace topofit::decision {

WarmCapacity::WarmCapacity(std::vector<WarmShape> shapes) {
  for (WarmShape& shape : shapes) {
    if (shape.demand.wants_gpus() && shape.replicas > 0) shapes_.push_back(std::move(shape));
  }
  // Largest first, as first-fit decreasing packs: a small set taken first could split the only place of a
  // large one. Stable: shapes of one size keep the order given.
  std::stable_sort(shapes_.begin(), shapes_.end(),
                   [](const WarmShape& a, const WarmShape& b) { return a.demand.request.gpus > b.demand.request.gpus; });
}

std::vector<int> WarmCapacity::KeptReplicas(const topology::Topology& topology, topology::GpuSet free,
                                            WarmMemo* memo) const {
  const std::pair<const topology::Topology*, uint32_t> key{&topology, free.mask()};
  if (memo != nullptr) {
    if (const auto it = memo->find(key); it != memo->end()) return it->second;
  }
  std::vector<int> kept(shapes_.size(), 0);
  for (size_t s = 0; s < shapes_.size(); ++s) {
    const WarmShape& shape = shapes_[s];
    const int gpus = shape.demand.request.gpus;
    if (gpus > topology.gpu_count()) continue;
    while (kept[s] < shape.replicas && free.size() >= gpus) {
      // 0 < gpus <= gpu_count and `free` names the node's own GPUs: Fit cannot fail on its arguments.
      const topology::FitResult fit = *topology::Fit(topology, free, shape.demand.request);
      if (!fit.fits()) break;
      ++kept[s];
      free = fit.chosen->leftover;
    }
  }
  if (memo != nullptr) memo->emplace(key, kept);
  return kept;
}

int WarmCapacity::KeptGpus(const topology::Topology& topology, topology::GpuSet free, WarmMemo* memo) const {
  const std::vector<int> kept = KeptReplicas(topology, free, memo);
  int gpus = 0;
  for (size_t s = 0; s < shapes_.size(); ++s) gpus += kept[s] * shapes_[s].demand.request.gpus;
  return gpus;
}

int WarmCapacity::LostGpus(const NodeGpuSnapshot& node, topology::GpuSet taken, WarmMemo* memo) const {
  if (shapes_.empty() || taken.empty()) return 0;
  const topology::GpuSet free = node.free();
  const std::vector<int> before = KeptReplicas(*node.topology, free, memo);
  const std::vector<int> after = KeptReplicas(*node.topology, free.without(taken), memo);
  int lost = 0;
  for (size_t s = 0; s < shapes_.size(); ++s) {
    lost += std::max(0, before[s] - after[s]) * shapes_[s].demand.request.gpus;
  }
  return lost;
}

int WarmCapacity::BrokenGpus(const NodeGpuSnapshot& node, topology::GpuSet taken, WarmMemo* memo) const {
  return std::max(0, LostGpus(node, taken, memo) - taken.size());
}

int64_t WarmKeptScore(int64_t score, int broken_gpus, int requested_gpus) {
  if (broken_gpus <= 0) return score;
  const int64_t whole = static_cast<int64_t>(broken_gpus) + std::max(requested_gpus, 0);
  const int64_t cost = (kWarmBreakPoints * broken_gpus + whole - 1) / whole;
  return std::max(kMinExtenderScore, score - cost);
}

int64_t WarmKeptScore(const WarmCapacity& warm, const GpuDemand& demand, const FilterMemo::Entry& filtered,
                      const NodeGpuSnapshot& node, WarmMemo* memo) {
  if (warm.empty() || !filtered.verdict.chosen) return filtered.score;
  return WarmKeptScore(filtered.score, warm.BrokenGpus(node, filtered.verdict.chosen->gpus, memo), demand.request.gpus);
}

}  // namespace topofit::decision
