#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "topology/ids.h"

namespace topofit::topology {

// A set of GPUs on one node, as a bitmask over GPU indices. Value type; cheap to copy.
class GpuSet {
 public:
  constexpr GpuSet() = default;
  static constexpr GpuSet FromMask(uint32_t mask) { return GpuSet(mask); }
  // The first `count` GPUs: every GPU of a node with `count` GPUs.
  static constexpr GpuSet FirstN(int count) {
    return GpuSet(count >= 32 ? ~0u : (1u << count) - 1u);
  }
  // Fails on a duplicate id or one outside [0, gpu_count).
  static absl::StatusOr<GpuSet> FromIds(const std::vector<GpuId>& ids, int gpu_count);

  constexpr uint32_t mask() const { return mask_; }
  constexpr int size() const { return std::popcount(mask_); }
  constexpr bool empty() const { return mask_ == 0; }
  constexpr bool contains(GpuId id) const { return (mask_ >> id.value) & 1u; }
  constexpr bool contains(GpuSet other) const { return (mask_ & other.mask_) == other.mask_; }

  constexpr GpuSet with(GpuId id) const { return GpuSet(mask_ | (1u << id.value)); }
  constexpr GpuSet without(GpuSet other) const { return GpuSet(mask_ & ~other.mask_); }
  constexpr GpuSet operator&(GpuSet other) const { return GpuSet(mask_ & other.mask_); }
  constexpr GpuSet operator|(GpuSet other) const { return GpuSet(mask_ | other.mask_); }
  friend constexpr bool operator==(GpuSet, GpuSet) = default;

  std::vector<GpuId> ids() const;
  // "0,1,4" — the form `topofit.io/gpu-ids` and the CLI use.
  std::string ToString() const;
  // Parses "0,1,4" (spaces allowed); fails on duplicates, non-numbers and ids outside [0, gpu_count).
  static absl::StatusOr<GpuSet> Parse(absl::string_view text, int gpu_count);

 private:
  constexpr explicit GpuSet(uint32_t mask) : mask_(mask) {}
  uint32_t mask_ = 0;
};

}  // namespace topofit::topology
