#include "replay/peer/go_gpuallocator.h"

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace topofit::bench {
namespace {

using topology::GpuId;
using topology::GpuSet;
using topology::Link;
using topology::LinkClass;
using topology::Topology;

// go-gpuallocator's pair score table (besteffort_policy.go, calculateGPUPairScore).
constexpr int kCrossCpu = 10;
constexpr int kSameCpu = 20;
constexpr int kHostBridge = 30;
constexpr int kMultiSwitch = 40;
constexpr int kSingleSwitch = 50;
constexpr int kPerNvLink = 100;
constexpr int kMostScoredNvLinks = 12;  // its switch has no case for 13..18 links

// The PCIe term for a pair the model only knows as NV#: the NUMA nodes are all that is left to go by.
int PcieTermUnderNvLink(const Topology& topology, GpuId a, GpuId b) {
  const int numa_a = topology.gpu(a).numa_node, numa_b = topology.gpu(b).numa_node;
  return numa_a >= 0 && numa_b >= 0 && numa_a != numa_b ? kCrossCpu : kSameCpu;
}

// The policy's exhaustive search over partitions of the padded free list, in its enumeration order (so
// that ties break the same way). Devices are positions 0..m-1 in the ascending free list; padding slots
// are not materialised: a block is the mask of its real devices, since padding scores nothing.
class PartitionSearch {
 public:
  PartitionSearch(const Topology& topology, const std::vector<GpuId>& free, int k)
      : k_(k), m_(static_cast<int>(free.size())), padding_((k - m_ % k) % k) {
    for (int a = 0; a < m_; ++a) {
      for (int b = 0; b < m_; ++b) pair_[a][b] = PeerPairScore(topology, free[a], free[b]);
    }
  }

  // The block the policy returns, as a mask over positions.
  uint32_t Run() {
    Iterate((1u << m_) - 1, padding_, 0);
    uint32_t chosen = best_[0];
    int chosen_score = BlockScore(chosen);
    for (int i = 1; i < best_count_; ++i) {
      const int score = BlockScore(best_[i]);
      if (score > chosen_score) {  // strictly: the first of equally scored blocks stays
        chosen = best_[i];
        chosen_score = score;
      }
    }
    return chosen;
  }

 private:
  static constexpr int8_t kPad = -1;

  // The devices still unplaced: real ones ascending, then the padding slots (the policy appends them).
  struct Level {
    std::array<int8_t, 32> devices;
    int length = 0;
    uint32_t real = 0;
    int pads = 0;
    int score = 0;  // of the blocks already placed
  };

  // Places one more block: devices[0] with every (k-1)-subset of the rest, in lexicographic order.
  void Iterate(uint32_t real, int pads, int score) {
    if (std::popcount(real) + pads == k_) {  // what is left is the last block
      blocks_[depth_] = real;
      Leaf(score + BlockScore(real));
      return;
    }
    Level level;
    level.real = real;
    level.pads = pads;
    level.score = score;
    for (uint32_t r = real; r != 0; r &= r - 1) level.devices[level.length++] = static_cast<int8_t>(std::countr_zero(r));
    for (int p = 0; p < pads; ++p) level.devices[level.length++] = kPad;
    const int first = level.devices[0];  // always real: padding sits at the end and never fills a level
    Choose(level, 1, k_ - 1, 1u << first, 0, 0);
  }

  // A block takes all the padding or none of it: the policy visits the blocks holding part of it and
  // rejects them; here they are never built. The padding sits at the end of the list, so the only valid
  // way to reach it is to take all of it at its first slot; the remaining blocks come in the same order.
  void Choose(const Level& level, int start, int need, uint32_t set, int set_pads, int set_score) {
    if (need == 0) {
      blocks_[depth_++] = set;
      Iterate(level.real & ~set, set_pads != 0 ? 0 : level.pads, level.score + set_score);
      --depth_;
      return;
    }
    for (int i = start; i <= level.length - need; ++i) {
      const int device = level.devices[i];
      if (device == kPad) {
        if (i == level.length - level.pads && need == level.pads) Choose(level, level.length, 0, set, need, set_score);
        return;  // any later start leaves part of the padding behind
      }
      Choose(level, i + 1, need - 1, set | (1u << device), set_pads, set_score + ScoreAgainst(device, set));
    }
  }

  void Leaf(int score) {
    if (best_count_ != 0 && score <= best_score_) return;  // the first best partition stays
    best_score_ = score;
    best_count_ = depth_ + 1;
    best_ = blocks_;
  }

  int ScoreAgainst(int device, uint32_t set) const {
    int score = 0;
    for (uint32_t r = set; r != 0; r &= r - 1) score += pair_[device][std::countr_zero(r)];
    return score;
  }

  // Padding slots score 0 with everything, so a block scores by its real devices alone.
  int BlockScore(uint32_t block) const {
    int score = 0;
    for (uint32_t r = block; r != 0; r &= r - 1) score += ScoreAgainst(std::countr_zero(r), r & (r - 1));
    return score;
  }

  const int k_;
  const int m_;
  const int padding_;
  std::array<std::array<int, topology::kMaxGpusPerNode>, topology::kMaxGpusPerNode> pair_{};
  std::array<uint32_t, topology::kMaxGpusPerNode> blocks_{};
  int depth_ = 0;
  std::array<uint32_t, topology::kMaxGpusPerNode> best_{};
  int best_count_ = 0;
  int best_score_ = 0;
};

}  // namespace

int PeerPairScore(const Topology& topology, GpuId a, GpuId b) {
  if (a == b) return 0;
  const Link& link = topology.link(a, b);
  switch (link.link_class) {
    case LinkClass::kSelf:
      return 0;
    case LinkClass::kNvLink: {
      const int pcie = PcieTermUnderNvLink(topology, a, b);
      // Through an NVSwitch the peer sees the switch, not the GPU, at the far end of every link.
      if (link.via_nvswitch || link.nvlinks > kMostScoredNvLinks) return pcie;
      return pcie + kPerNvLink * link.nvlinks;
    }
    case LinkClass::kPix:
      return kSingleSwitch;
    case LinkClass::kPxb:
      return kMultiSwitch;
    case LinkClass::kPhb:
      return kHostBridge;
    case LinkClass::kNode:
      return kSameCpu;
    case LinkClass::kSys:
      return kCrossCpu;
  }
  return 0;
}

GpuSet PeerBestEffort(const Topology& topology, GpuSet free, int k) {
  const std::vector<GpuId> ids = free.ids();
  if (k <= 0 || static_cast<int>(ids.size()) < k) return GpuSet();
  // The policy's shortcut for one GPU: every single-GPU partition scores 0, so the first free GPU wins.
  if (k == 1) return GpuSet().with(ids.front());
  const uint32_t chosen = PartitionSearch(topology, ids, k).Run();
  GpuSet out;
  for (uint32_t r = chosen; r != 0; r &= r - 1) out = out.with(ids[std::countr_zero(r)]);
  return out;
}

}  // namespace topofit::bench
