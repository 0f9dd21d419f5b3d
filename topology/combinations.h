#pragma once

#include <array>
#include <cstdint>

#include "topology/gpu_set.h"

namespace topofit::topology {

// Calls `visit(GpuSet)` for every subset of `from` with exactly `k` GPUs, in increasing order of the
// subsets' positions within `from`. Gosper's hack over a word of |from| bits, mapped onto the node's GPU
// indices a byte at a time through two 256-entry tables: O(1) per subset.
template <typename Visit>
void ForEachSubsetOfSize(GpuSet from, int k, Visit&& visit) {
  const int m = from.size();
  if (k < 0 || k > m) return;
  if (k == 0) {
    visit(GpuSet());
    return;
  }
  std::array<int, 32> position{};
  int i = 0;
  for (GpuId id : from.ids()) position[i++] = id.value;
  std::array<uint32_t, 256> low{}, high{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      if (!(byte & (1u << bit))) continue;
      if (bit < m) low[byte] |= 1u << position[bit];
      if (bit + 8 < m) high[byte] |= 1u << position[bit + 8];
    }
  }
  const uint32_t end = 1u << m;
  for (uint32_t c = (1u << k) - 1; c < end;) {
    visit(GpuSet::FromMask(low[c & 0xff] | high[(c >> 8) & 0xff]));
    const uint32_t lowest = c & (~c + 1);
    const uint32_t ripple = c + lowest;
    c = (((ripple ^ c) >> 2) / lowest) | ripple;
  }
}

}  // namespace topofit::topology
