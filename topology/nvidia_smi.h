#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "topology/topology.h"

namespace topofit::topology {

// What `nvidia-smi topo -m` does not print but the model needs.
struct NvidiaSmiHints {
  // A GPU Feature Discovery `nvidia.com/gpu.product` label ("NVIDIA-H100-80GB-HBM3") or an nvidia-smi
  // product name ("NVIDIA A100-SXM4-80GB"). It sets every GPU's product and memory and the node's NVLink and
  // PCIe generations (FindProduct). Empty or unknown: NVLink generation 0 (the slowest is assumed) and PCIe
  // Gen3, with a warning in the topology.
  std::string product;
};

// Builds a node's topology from `nvidia-smi topo -m` output as drivers print it:
//
//   <header>   GPU0..GPUn-1, then NIC0.. (or NIC device names such as mlx5_0 on older drivers), then any of
//              `CPU Affinity`, `NUMA Affinity`, `GPU NUMA ID`
//   <rows>     one per GPU, then one per NIC, in header order; link tokens X, NV#, PIX, PXB, PHB, NODE, SYS
//   Legend:    free text, ignored
//   NIC Legend: `NIC0: mlx5_0` lines naming the NICs (optional)
//
// Cells are separated by any mix of tabs and spaces; blank lines and CRLF line ends are accepted. GPU NUMA
// nodes come from `NUMA Affinity` (-1 for N/A or when absent); a NIC's NUMA node is that of the GPUs it
// reaches without crossing the SMP interconnect. NVSwitch is inferred from the matrix (InferNvSwitch).
//
// Errors are InvalidArgument with the 1-based line and column of the offending cell, e.g.
// "nvidia-smi topo -m, line 3, column 14: unknown link "NV0"; ...".
absl::StatusOr<Topology> ParseNvidiaSmiTopo(absl::string_view text, const NvidiaSmiHints& hints = {});

}  // namespace topofit::topology
