#include "topology/bandwidth.h"

#include <algorithm>

namespace topofit::topology {
namespace {

// Per-link NVLink bandwidth per direction (NVIDIA datasheets: P100 4 x 20 GB/s = 80 GB/s; V100 6 x 25 =
// 150; A100 12 x 25 = 300; H100 18 x 25 = 450; B200 18 x 50 = 900).
constexpr int64_t kNvLinkMbps[] = {20'000, 20'000, 25'000, 25'000, 25'000, 50'000};

// Usable x16 PCIe bandwidth per direction. Gen3: NCCL's PCI_BW (12 GB/s, src/graph/topo.h); each later
// generation doubles the signalling rate.
constexpr int64_t kPcieGen3Mbps = 12'000;

// P2P traffic through a CPU root complex is split into 64-byte TLPs, costing about a fifth of the link
// (NCCL's INTEL_P2P_OVERHEAD: bw * 6 / 5 on the path, src/graph/topo.h).
constexpr int64_t kHostBridgeOverheadNum = 5, kHostBridgeOverheadDen = 6;

// The inter-socket link caps GPU traffic that crosses it (NCCL's SKL_QPI_BW, 10 GB/s).
constexpr int64_t kInterSocketMbps = 10'000;

}  // namespace

int64_t NvLinkMbps(int generation) {
  if (generation < 1 || generation > 5) return kNvLinkMbps[0];
  return kNvLinkMbps[generation];
}

int64_t PcieMbps(int generation) {
  if (generation <= 3) return kPcieGen3Mbps;
  return kPcieGen3Mbps << std::min(generation - 3, 3);
}

int64_t PairBandwidthMbps(const Link& link, int nvlink_generation, int pcie_generation) {
  const int64_t pcie = PcieMbps(pcie_generation);
  switch (link.link_class) {
    case LinkClass::kSelf:
      return 0;
    case LinkClass::kNvLink:
      return link.nvlinks * NvLinkMbps(nvlink_generation);
    case LinkClass::kPix:
    case LinkClass::kPxb:
      return pcie;
    case LinkClass::kPhb:
    case LinkClass::kNode:
      return pcie * kHostBridgeOverheadNum / kHostBridgeOverheadDen;
    case LinkClass::kSys:
      return std::min(pcie * kHostBridgeOverheadNum / kHostBridgeOverheadDen, kInterSocketMbps);
  }
  return 0;
}

}  // namespace topofit::topology
