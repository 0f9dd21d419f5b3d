#pragma once

#include <cstdint>

#include "replay/workload.h"

namespace topofit::sim {

// The default workload when no trace is given: bursty agentic inference, multi-GPU training jobs and
// pods without GPUs, on CloudGpuFleet. The same options give the same workload, pod for pod.
// Distributions and their parameters: synthetic.cc and docs/bench-workloads.md.
struct SyntheticOptions {
  int64_t pod_count = 10000;
  // Arrivals fall in [0, horizon). 0: 8.64 s per pod (a day per 10,000 pods), so that the load per hour,
  // and the cluster it needs, stay the same at any pod count.
  SimTime horizon = 0;
  uint64_t seed = 1;
  // Shares of pod_count, each clamped to what is left: inference bursts, training jobs; the rest run
  // without GPUs.
  double inference_share = 0.85;
  double training_share = 0.03;
  // Mean inference pods per burst (geometric); a burst's pods arrive within a minute.
  double burst_mean_pods = 24;
  // How much the bursts' rate follows the day, A in [0, 1]: at t it is (1 - A cos(2 pi t / 24 h)) times its
  // mean, lowest at the start of the horizon and highest twelve hours on, as inference follows its users'
  // working day. 0: uniform over the horizon (stationary), the default. Training and pods without GPUs stay
  // uniform.
  double diurnal_amplitude = 0;
  int max_nodes_per_group = 64;  // the fleet's ceiling (CloudGpuFleet)
};

Workload GenerateSynthetic(const SyntheticOptions& options);

}  // namespace topofit::sim
