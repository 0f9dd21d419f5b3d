#include "bench/sim/summary.h"

#include <algorithm>
#include <cmath>

namespace topofit::sim {
namespace {

PendingPercentiles PercentilesOf(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  PendingPercentiles p;
  p.pods = static_cast<int>(seconds.size());
  p.p50_seconds = Percentile(seconds, 50);
  p.p95_seconds = Percentile(seconds, 95);
  p.p99_seconds = Percentile(seconds, 99);
  return p;
}

}  // namespace

double Percentile(const std::vector<double>& sorted, double percentile) {
  if (sorted.empty()) return 0;
  const double rank = std::ceil(percentile / 100 * static_cast<double>(sorted.size()));
  const size_t index = static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(sorted.size()))) - 1;
  return sorted[index];
}

PolicySummary Summarise(const ReplayResult& result) {
  PolicySummary s;
  s.policy = result.policy;
  s.provisioned_gpu_hours = result.provisioned_gpu_hours;
  s.allocated_gpu_hours = result.allocated_gpu_hours;
  s.idle_gpu_hours = result.provisioned_gpu_hours - result.allocated_gpu_hours;
  s.idle_share = result.provisioned_gpu_hours > 0 ? s.idle_gpu_hours / result.provisioned_gpu_hours : 0;
  s.scale_ups = static_cast<int>(result.scale_ups.size());
  for (const ScaleUpOutcome& scale_up : result.scale_ups) s.stranded_scale_ups += scale_up.stranded;
  s.nodes_created = result.nodes_created;
  s.peak_nodes = result.peak_nodes;
  s.provisioning_requests = result.provisioning_requests;
  s.vetoes = result.vetoes;
  s.failed_nodes = result.failed_nodes;
  s.cost_dollars = result.cost_dollars;
  s.lower_bound_cost_dollars = result.lower_bound_cost_dollars;
  s.hours = static_cast<double>(result.end) / static_cast<double>(kHour);

  std::vector<double> all;
  std::map<int, std::vector<double>> by_gpus;
  double stretch_sum = 0;
  int best = 0;
  for (const PodOutcome& pod : result.pods) {
    ++s.pods;
    s.requested_gpu_hours += pod.gpus * static_cast<double>(pod.ideal_duration) / static_cast<double>(kHour);
    const SimTime start = pod.first_start >= 0 ? pod.first_start : std::max(result.end, pod.arrival);
    if (pod.first_start < 0) ++s.pods_never_started;
    const double wait = static_cast<double>(start - pod.arrival) / static_cast<double>(kSecond);
    all.push_back(wait);
    by_gpus[pod.gpus].push_back(wait);
    if (pod.gpus >= 2 && pod.first_start >= 0) {
      ++s.multi_gpu_pods_started;
      stretch_sum += pod.stretch;
      best += pod.best_topology;
      s.slowdown_gpu_hours +=
          pod.gpus * (pod.stretch - 1) * static_cast<double>(pod.ideal_duration) / static_cast<double>(kHour);
    }
  }
  s.pending = PercentilesOf(std::move(all));
  for (auto& [gpus, waits] : by_gpus) s.pending_by_gpus[gpus] = PercentilesOf(std::move(waits));
  if (s.multi_gpu_pods_started > 0) {
    s.mean_stretch = stretch_sum / s.multi_gpu_pods_started;
    s.best_topology_share = static_cast<double>(best) / s.multi_gpu_pods_started;
  }
  return s;
}

}  // namespace topofit::sim
