#pragma once

#include <vector>

#include "replay/workload.h"

namespace topofit::sim {

// The node groups of a realistic cloud GPU inference and training fleet, one per catalog shape: the
// fleet the Azure LLM replay and the synthetic workload run on (docs/bench-workloads.md):
//   p5.48xlarge (8x H100, NVSwitch), p4d.24xlarge (8x A100, NVSwitch), g6e.48xlarge (8x L40S, PCIe),
//   g5.48xlarge (8x A10G, PCIe), g4dn.12xlarge (4x T4, PCIe), and m5.8xlarge for pods without GPUs.
// Prices are AWS us-east-1 on-demand list prices per node-hour (2024, approximate). Allocatable CPU and
// memory are the instance's less 1 vCPU and 4 GiB for the kubelet and system daemons. Every group starts
// empty (min 0, initial 0) and grows to `max_nodes_per_group`.
std::vector<NodeGroupSpec> CloudGpuFleet(int max_nodes_per_group);

}  // namespace topofit::sim
