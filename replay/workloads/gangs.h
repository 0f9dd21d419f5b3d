#pragma once

#include <cstdint>
#include <vector>

#include "replay/workload.h"

namespace topofit::sim {

// An NVL72 fleet: `racks` node groups, one per GB200 NVL72 rack (18 compute trays of 4 GPUs on one NVLink
// domain, as a GKE A4X node pool or an AWS UltraServer is bought), each from 0 to 18 nodes.
// docs/bench-workloads.md, "Gangs on NVL72".
std::vector<NodeGroupSpec> Nvl72Fleet(int racks);

struct GangsOptions {
  int racks = 8;
  SimTime horizon = kDay;  // arrivals fall in [0, horizon)
  uint64_t seed = 1;
  // Per day and per 8 racks (scaled to `racks` and `horizon`): training gangs, wide expert-parallel
  // inference groups, and 1-GPU pods.
  int training_gangs_per_day = 48;
  int inference_groups_per_day = 24;
  int single_gpu_pods_per_day = 1200;
};

// The built-in gang workload (`topofit bench --workload gangs`): training gangs of 8-72 GPUs and wide-EP
// inference groups of 16-32 GPUs, every member a 4-GPU pod that requires its gang's NVLink domain, among
// 1-GPU pods, on Nvl72Fleet. The same options give the same workload, pod for pod. Distributions and where
// their shape comes from: gangs.cc and docs/bench-workloads.md.
Workload GenerateGangs(const GangsOptions& options);

}  // namespace topofit::sim
