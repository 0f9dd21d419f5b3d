#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"

namespace topofit::topology {

// How two devices on a node are connected, in the vocabulary of `nvidia-smi topo -m`, best first. The
// order is meaningful: a larger value is a weaker link, so "the weakest link of a set" is a max.
enum class LinkClass : uint8_t {
  kSelf = 0,  // X
  kNvLink,    // NV#: NVLink, directly or through an NVSwitch
  kPix,       // at most one PCIe bridge
  kPxb,       // several PCIe bridges, no host bridge
  kPhb,       // a PCIe host bridge (the CPU)
  kNode,      // between host bridges inside one NUMA node
  kSys,       // across the SMP interconnect between NUMA nodes (QPI/UPI/xGMI)
};

// "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS".
absl::string_view LinkClassName(LinkClass link_class);
// Accepts the names above (case-insensitive) and `NV#` tokens, which mean kNvLink.
absl::StatusOr<LinkClass> ParseLinkClass(absl::string_view text);
constexpr bool IsAtLeast(LinkClass link, LinkClass required) { return link <= required; }

// One GPU-to-GPU (or GPU-to-NIC) connection.
struct Link {
  LinkClass link_class = LinkClass::kSys;
  // Bonded NVLinks for kNvLink (the # of NV#); for NVSwitch systems, the GPU's links into the switch fabric.
  int nvlinks = 0;
  // The NVLinks go through an NVSwitch: every pair of the node's GPUs sees the same bandwidth.
  bool via_nvswitch = false;

  friend bool operator==(const Link&, const Link&) = default;
};

// "NV12", "PIX", ... — the token `nvidia-smi topo -m` prints for this link.
std::string LinkToken(const Link& link);
// The inverse of LinkToken: "NV12" is 12 bonded NVLinks (not marked as NVSwitch; only the whole matrix
// tells that), "PIX" a PCIe link, "X" self.
absl::StatusOr<Link> ParseLinkToken(absl::string_view token);

}  // namespace topofit::topology
