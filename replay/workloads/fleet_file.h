#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "replay/workload.h"

namespace topofit::sim {

// A user's node groups (`topofit bench --fleet FILE`), as YAML: a list under `groups:` (or the list
// itself), one map per group. docs/bench-workloads.md, "Your own fleet", lists the keys:
//
//   groups:
//   - name: nvl72-00               # required
//     instance_type: gb200-nvl72-node   # a catalog shape or alias (topofit topo --list-shapes)
//     gpu_product: NVIDIA-GB200    # the nvidia.com/gpu.product label (default: the shape's)
//     gpus: 4                      # per node (0: a group without GPUs)
//     cpu: "142"                   # allocatable, Kubernetes quantities
//     memory: 880Gi
//     price_per_hour: 42.0         # per node, dollars
//     min_size: 0
//     max_size: 18                 # required
//     initial_size: 0
//     boot_seconds: [360, 720]     # from the scale-up to Ready: uniform in [min, max] (or one number)
//     nodes_per_domain: 18         # multi-node NVLink domains (0: none)
//     domain_label: nvidia.com/gpu.clique
//     taints: ["nvidia.com/gpu=present:NoSchedule"]
//     provision_failure_rate: 0.0
//
// InvalidArgument naming the group and the key for malformed YAML, an unknown key, a missing name or
// max_size, a repeated name, a negative or inconsistent size (min <= initial <= max), a quantity that does
// not parse, or a rate outside [0, 1]. Shapes are resolved when the replay builds the groups.
absl::StatusOr<std::vector<NodeGroupSpec>> ParseFleetYaml(absl::string_view yaml);

// `groups` as a fleet file ParseFleetYaml reads back to the same groups (prices to 10 significant digits;
// cpu in millicores, memory in MiB): what `topofit bench --print-fleet` writes, so a built-in workload's
// fleet is a file to start one's own from.
std::string FleetYaml(const std::vector<NodeGroupSpec>& groups);

}  // namespace topofit::sim
