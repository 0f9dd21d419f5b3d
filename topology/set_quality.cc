#include "topology/set_quality.h"

#include <algorithm>
#include <bit>

namespace topofit::topology {

// Ring bandwidth of every subset at once, by a Held-Karp dynamic programme over bottleneck paths: a ring
// is anchored at its lowest GPU s; path[mask][v] is the best bottleneck of a path that starts at s =
// lowest(mask), visits exactly `mask` and ends at v. Closing the path back to s gives the ring. Every subset
// is some mask's anchor set, so one pass fills the whole table.
SetQualityTable SetQualityTable::Build(int gpu_count, const std::vector<int64_t>& pair_mbps,
                                       const std::vector<LinkClass>& links) {
  const int n = gpu_count;
  const uint32_t subsets = 1u << n;
  SetQualityTable table;
  table.ring_mbps_.assign(subsets, 0);
  table.weakest_.assign(subsets, LinkClass::kSelf);
  table.cohesion_.assign(subsets, 0);
  table.best_by_size_.assign(n + 1, 0);
  auto bw = [&](int a, int b) { return static_cast<int32_t>(pair_mbps[a * n + b]); };

  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) table.max_pair_mbps_ = std::max<int64_t>(table.max_pair_mbps_, bw(a, b));
  }

  // weakest and cohesion: add the highest GPU to the table entry of the rest.
  for (uint32_t mask = 1; mask < subsets; ++mask) {
    const int top = 31 - std::countl_zero(mask);
    const uint32_t rest = mask & ~(1u << top);
    LinkClass weakest = table.weakest_[rest];
    int32_t cohesion = table.cohesion_[rest];
    for (uint32_t r = rest; r != 0; r &= r - 1) {
      const int other = std::countr_zero(r);
      weakest = std::max(weakest, links[top * n + other]);
      cohesion += bw(top, other);
    }
    table.weakest_[mask] = weakest;
    table.cohesion_[mask] = cohesion;
  }

  // path[mask * n + v]; -1 marks "no such path".
  std::vector<int32_t> path(static_cast<size_t>(subsets) * n, -1);
  constexpr int32_t kOpen = INT32_MAX;  // a path of one GPU has no bottleneck yet
  for (int s = 0; s < n; ++s) path[(1u << s) * n + s] = kOpen;
  for (uint32_t mask = 1; mask < subsets; ++mask) {
    const int start = std::countr_zero(mask);
    const int size = std::popcount(mask);
    int32_t ring = 0;
    for (uint32_t m = mask; m != 0; m &= m - 1) {
      const int v = std::countr_zero(m);
      const int32_t best = path[mask * n + v];
      if (best < 0) continue;
      if (size >= 3 && v != start) ring = std::max(ring, std::min(best, bw(v, start)));
      // Extend to GPUs above the anchor that are not yet on the path.
      for (int u = start + 1; u < n; ++u) {
        if (mask & (1u << u)) continue;
        const uint32_t next = mask | (1u << u);
        int32_t& slot = path[next * n + u];
        slot = std::max(slot, std::min(best, bw(v, u)));
      }
    }
    if (size == 2) ring = bw(start, 31 - std::countl_zero(mask));
    table.ring_mbps_[mask] = ring;
    table.best_by_size_[size] = std::max<int64_t>(table.best_by_size_[size], ring);
  }
  return table;
}

}  // namespace topofit::topology
