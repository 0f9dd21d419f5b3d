#pragma once

#include <cstdint>
#include <vector>

#include "topology/gpu_set.h"
#include "topology/link.h"

namespace topofit::topology {

// The quality of a set of GPUs on one node.
struct SetQuality {
  // Estimated all-reduce bus bandwidth per direction, MB/s: the bottleneck link of the best ring through
  // the set (a ring all-reduce moves every byte over every ring edge, so the slowest edge sets the pace).
  // 0 for a single GPU, which runs no collective.
  int64_t bandwidth_mbps = 0;
  // The weakest link between any two GPUs of the set; kSelf for a single GPU.
  LinkClass weakest = LinkClass::kSelf;
  friend bool operator==(const SetQuality&, const SetQuality&) = default;
};

// Quality of every subset of a node's GPUs, computed once per topology so that scoring a candidate set is
// a table read. For n GPUs: 2^n entries of each table (at most 65,536), built in O(2^n * n^2).
class SetQualityTable {
 public:
  // `pair_mbps` and `links` are n x n, row-major.
  static SetQualityTable Build(int gpu_count, const std::vector<int64_t>& pair_mbps,
                               const std::vector<LinkClass>& links);

  SetQuality Of(GpuSet set) const {
    return SetQuality{ring_mbps_[set.mask()], weakest_[set.mask()]};
  }
  // Sum of the pair bandwidths inside the set: how well the GPUs of a set connect among themselves, the
  // measure of what a placement leaves behind (higher: larger well-connected blocks stay together).
  int64_t Cohesion(GpuSet set) const { return cohesion_[set.mask()]; }
  // The best bandwidth any set of `size` GPUs reaches on this node when all of them are free.
  int64_t BestBandwidth(int size) const { return best_by_size_[size]; }
  int64_t MaxPairMbps() const { return max_pair_mbps_; }

 private:
  std::vector<int32_t> ring_mbps_;
  std::vector<LinkClass> weakest_;
  std::vector<int32_t> cohesion_;
  std::vector<int64_t> best_by_size_;
  int64_t max_pair_mbps_ = 0;
};

}  // namespace topofit::topology
