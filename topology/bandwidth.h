#pragma once

#include <cstdint>

#include "topology/link.h"

namespace topofit::topology {

// The physical bandwidth model: per-direction bandwidth of one link, in MB/s. Integers, so that equal
// bandwidths compare equal and ties break deterministically. Every constant and its source is in
// docs/topology-model.md.

// One NVLink of a generation. Generation 0 (unknown) takes the slowest generation's figure.
int64_t NvLinkMbps(int generation);
// A x16 PCIe link of a generation. Unknown generations take Gen3's figure.
int64_t PcieMbps(int generation);
// Peer-to-peer bandwidth between two GPUs joined by `link`, on a node whose GPUs run at these generations.
int64_t PairBandwidthMbps(const Link& link, int nvlink_generation, int pcie_generation);

}  // namespace topofit::topology
