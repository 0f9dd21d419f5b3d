#pragma once

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "topology/nvidia_smi.h"
#include "topology/topology.h"

namespace topofit::codec {

// The explicit JSON topology descriptor (schema: docs/topology-descriptor.md). Malformed input (not JSON,
// wrong types, missing gpus, unknown fields or link tokens, duplicate pairs, bad indices) is an
// InvalidArgument naming the JSON path, e.g. "topology descriptor: links[3].gpus[1]: GPU 9 does not exist
// (the node has 8 GPUs)". Never throws.
absl::StatusOr<topology::Topology> ParseTopologyDescriptor(absl::string_view json);

// The descriptor of `topology`, every field explicit, so that ParseTopologyDescriptor(TopologyToJson(t))
// gives back the same GPUs, links, NICs, generations and clique. Names from nvidia-smi text are limited
// to a safe alphabet by its parser, so dump() cannot meet invalid UTF-8.
nlohmann::json TopologyToJson(const topology::Topology& topology);

// The value of the node annotation `topofit.io/gpu-topology`: a JSON descriptor when its first non-space
// character is '{', `nvidia-smi topo -m` text otherwise. `hints.product` (the node's GFD product label)
// names the GPUs' product for nvidia-smi text, and for descriptor GPUs that do not name their own.
absl::StatusOr<topology::Topology> ParseTopologyAnnotation(absl::string_view text,
                                                           const topology::NvidiaSmiHints& hints);

}  // namespace topofit::codec
