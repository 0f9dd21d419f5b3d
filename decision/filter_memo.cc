#include "decision/filter_memo.h"

#include "decision/prioritize.h"

namespace topofit::decision {

const FilterMemo::Entry& FilterMemo::FilterAndScore(const GpuDemand& demand, const NodeGpuSnapshot& node) {
  // Every input of FilterNode but the node's name and origin, which it does not read.
  const Key key{node.topology.get(),     node.free().mask(),      demand.request.required.mask(),
                demand.request.gpus,     demand.request.min_link, demand.request.min_bandwidth_mbps,
                demand.policy};
  auto it = entries_.find(key);
  if (it != entries_.end()) return *it->second;
  if (entries_.size() >= max_entries_) {
    entries_.clear();
    topologies_.clear();
  }
  topologies_.try_emplace(node.topology.get(), node.topology);
  auto entry = std::make_unique<Entry>();
  entry->verdict = FilterNode(demand, node);
  entry->score = PrioritizeScore(demand, entry->verdict, *node.topology);
  return *entries_.emplace(key, std::move(entry)).first->second;
}

}  // namespace topofit::decision
