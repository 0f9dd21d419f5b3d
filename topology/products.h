#pragma once

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace topofit::topology {

// What the topology model needs to know about a GPU product: which NVLink and PCIe generation its links
// run at (they set the bandwidth of every link class) and its memory. Sources: NVIDIA's product datasheets.
struct ProductSpec {
  absl::string_view name;        // canonical short name, e.g. "H100-SXM"
  int nvlink_generation = 0;    // 0: the product has no NVLink
  int nvlinks_per_gpu = 0;      // NVLinks one GPU has (SXM parts; bridges for PCIe cards)
  int pcie_generation = 3;
  int64_t memory_mib = 0;
};

// Finds the product a GPU Feature Discovery `nvidia.com/gpu.product` label (e.g. "NVIDIA-H100-80GB-HBM3",
// "Tesla-V100-SXM2-16GB") or an `nvidia-smi` product name (e.g. "NVIDIA A100-SXM4-80GB") names.
// Case-insensitive; separators '-', '_' and ' ' are equivalent. nullopt when unknown.
std::optional<ProductSpec> FindProduct(absl::string_view product_label);

}  // namespace topofit::topology
