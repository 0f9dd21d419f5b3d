#pragma once

#include <compare>
#include <cstdint>
#include <string>

namespace topofit::topology {

// A GPU's index on its node, as `nvidia-smi` numbers it (GPU0, GPU1, ...). A distinct type so that a GPU
// index cannot be passed where a count or a NIC index is expected.
struct GpuId {
  int value = 0;
  friend constexpr auto operator<=>(GpuId, GpuId) = default;
};

// A NIC's index on its node (NIC0, NIC1, ... in `nvidia-smi topo -m`).
struct NicId {
  int value = 0;
  friend constexpr auto operator<=>(NicId, NicId) = default;
};

// A multi-node NVLink domain (GB200 NVL72 clique), as GPU Feature Discovery labels it:
// `nvidia.com/gpu.clique=<ClusterUUID>.<CliqueID>`.
struct DomainId {
  std::string value;
  friend auto operator<=>(const DomainId&, const DomainId&) = default;
};

// Nodes with more GPUs than this are rejected: the allocator's optimality guarantee and its per-subset
// tables are sized for it (DGX-2, the largest single-node NVLink shape, has 16).
inline constexpr int kMaxGpusPerNode = 16;

}  // namespace topofit::topology
