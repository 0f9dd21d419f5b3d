#pragma once

#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "decision/filter.h"
#include "decision/node_snapshot.h"
#include "decision/pod_demand.h"
#include "topology/topology.h"

namespace topofit::decision {

// FilterNode and the prioritize score, worked out once per distinct case. Both are functions of the
// node's topology, its free GPUs and the pod's demand only, and a cluster has few shapes, most nodes of
// a shape in a few states, and few distinct demands: a filter request over thousands of nodes, an
// expander call filling many template nodes the same way, and a replay of a million pods meet the same
// cases again and again. One memo type for the extender (one per request), the expander (one per call)
// and the replay (one per run). Not thread-safe; bounded (it starts over past `max_entries`).
class FilterMemo {
 public:
  struct Entry {
    NodeVerdict verdict;
    int64_t score = 0;  // PrioritizeScore of the verdict (prioritize.h)
  };

  explicit FilterMemo(size_t max_entries = 1 << 16) : max_entries_(max_entries) {}

  // FilterNode and its score for the pod on the node, from the memo when this case was seen.
  const Entry& FilterAndScore(const GpuDemand& demand, const NodeGpuSnapshot& node);

  size_t size() const { return entries_.size(); }

 private:
  struct Key {
    const topology::Topology* topology;
    uint32_t free_mask;
    uint32_t required_mask;  // GPUs the set must include (AllocationRequest::required)
    int gpus;
    topology::LinkClass min_link;
    int64_t min_bandwidth_mbps;
    TopologyPolicy policy;
    friend bool operator==(const Key&, const Key&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.topology, k.free_mask, k.required_mask, k.gpus, k.min_link,
                        k.min_bandwidth_mbps, k.policy);
    }
  };

  size_t max_entries_;
  absl::flat_hash_map<Key, std::unique_ptr<Entry>> entries_;  // stable addresses for the callers' references
  // Keys name topologies by address: keep each alive while an entry names it, so no address is reused.
  absl::flat_hash_map<const topology::Topology*, std::shared_ptr<const topology::Topology>> topologies_;
};

}  // namespace topofit::decision
