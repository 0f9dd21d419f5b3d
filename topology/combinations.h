#pragma once

#include <array>
#include <cstdint>

#include "topology/gpu_set.h"

namespace topofit::topology {

// Calls `visit(GpuSet)` for every subset of `from` with exactly `k` GPUs, in increasing order of the
// subsets' positions within `from`. Gosper's hack over a word of |from| bits, mapped onto the node's GPU
// indices a byte at a time through two tables: O(1) per subset. Only the table entries a word of |from|
// bits can index are filled, one OR each: filling all 2 x 256 bit by bit cost ~0.7 us a call, more than
// the whole search for one GPU on an 8-GPU node (issue 36).
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
  std::array<uint32_t, 256> low, high;  // entries past what the word can index are never read
  const auto fill = [&](std::array<uint32_t, 256>& table, int first, int bits) {
    table[0] = 0;
    for (uint32_t byte = 1; byte < (1u << bits); ++byte) {
      table[byte] = table[byte & (byte - 1)] | 1u << position[first + __builtin_ctz(byte)];
    }
  };
  fill(low, 0, m < 8 ? m : 8);
  fill(high, 8, m > 8 ? m - 8 : 0);
  const uint32_t end = 1u << m;
  for (uint32_t c = (1u << k) - 1; c < end;) {
    visit(GpuSet::FromMask(low[c & 0xff] | high[(c >> 8) & 0xff]));
    const uint32_t lowest = c & (~c + 1);
    const uint32_t ripple = c + lowest;
    c = (((ripple ^ c) >> 2) / lowest) | ripple;
  }
}

}  // namespace topofit::topology
