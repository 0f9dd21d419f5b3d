#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "topology/topology.h"

namespace topofit::topology {

// The catalog of known GPU server shapes. Node-group template nodes in cluster-autoscaler carry only labels,
// so this is how topofit reasons about nodes that do not exist yet. Shapes, aliases and sources:
// docs/catalog.md.

// The labels TopologyFromLabels reads.
inline constexpr absl::string_view kInstanceTypeLabel = "node.kubernetes.io/instance-type";
inline constexpr absl::string_view kGpuProductLabel = "nvidia.com/gpu.product";
inline constexpr absl::string_view kGpuCountLabel = "nvidia.com/gpu.count";
inline constexpr absl::string_view kGpuCliqueLabel = "nvidia.com/gpu.clique";

// Every shape's stable lowercase name ("dgx-a100", "g5.48xlarge", ...), in catalog order.
std::vector<absl::string_view> CatalogShapeNames();

// The topology of a shape, by its name or an alias (an instance type such as "p4d.24xlarge" or
// "a3-highgpu-8g"); case-insensitive. The topology's source is "catalog:<name>". NotFound, listing the
// known names, otherwise.
absl::StatusOr<Topology> CatalogShape(absl::string_view name_or_alias);

// The source of the conservative fallback below: a topology nothing said, assumed.
inline constexpr absl::string_view kFallbackSource = "fallback";

// A topology chosen for a node from its labels alone.
struct LabelledTopology {
  Topology topology;
  std::string shape;   // the catalog shape's name; empty when `fallback`
  bool fallback = false;
  std::string reason;  // why this shape (or why none), for logs and explanations
};

// Picks a node's topology from its labels, in this order:
//  1. `node.kubernetes.io/instance-type` naming a shape or an alias;
//  2. `nvidia.com/gpu.product` with a GPU count (`nvidia.com/gpu.count`, else `allocatable_gpus`) matching
//     a shape whose product fixes its board (SXM/NVSwitch baseboards, cloud-only cards);
//  3. a conservative PCIe-only fallback: that many GPUs, every pair SYS, the product's facts when known,
//     source "fallback", with a warning saying so.
// A shape whose GPU count disagrees with the node's count, or whose GPU model disagrees with the product
// label, is not picked: the fallback is, and the reason says why. `nvidia.com/gpu.clique` sets the
// topology's domain. InvalidArgument when the labels give no GPU count and `allocatable_gpus` is 0.
absl::StatusOr<LabelledTopology> TopologyFromLabels(
    const std::map<std::string, std::string, std::less<>>& labels, int allocatable_gpus);

}  // namespace topofit::topology
