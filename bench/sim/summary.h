#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench/sim/simulator.h"

namespace topofit::sim {

struct PendingPercentiles {
  int pods = 0;
  double p50_seconds = 0;
  double p95_seconds = 0;
  double p99_seconds = 0;
};

// The report's row for one policy (issue 5, "Report").
struct PolicySummary {
  std::string policy;
  double provisioned_gpu_hours = 0;
  double allocated_gpu_hours = 0;
  double idle_gpu_hours = 0;
  double idle_share = 0;  // idle / provisioned
  int scale_ups = 0;
  int stranded_scale_ups = 0;
  int nodes_created = 0;
  int peak_nodes = 0;
  int provisioning_requests = 0;
  int vetoes = 0;
  int failed_nodes = 0;  // requested nodes that never became Ready
  int pods = 0;
  int pods_never_started = 0;
  // Time from creation to first start. Pods that never started count with the replay's end as their
  // start: a floor on their wait.
  PendingPercentiles pending;
  std::map<int, PendingPercentiles> pending_by_gpus;  // GPUs requested -> percentiles
  int multi_gpu_pods_started = 0;
  double best_topology_share = 0;  // of multi-GPU pods started: their set had the shape's best bandwidth
  double mean_stretch = 1;         // of multi-GPU pods started (slowdown.h)
  double slowdown_gpu_hours = 0;   // GPU-hours spent beyond the ideal run time because of the placement
  double cost_dollars = 0;
  double lower_bound_cost_dollars = 0;
  double requested_gpu_hours = 0;  // the pods' ideal GPU-hours: a floor under allocated
  double hours = 0;                // the replay's length (to the last pod completion)
};

PolicySummary Summarise(const ReplayResult& result);

// Nearest-rank percentile of `values` (sorted ascending), 0 for none.
double Percentile(const std::vector<double>& sorted, double percentile);

}  // namespace topofit::sim
