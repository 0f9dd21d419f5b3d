#include "replay/summary.h"

#include <algorithm>
#include <cmath>

#include "replay/window.h"

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

namespace {

// The busy window's start and the fill, from the pods' arrivals (any order) from `from` on, up to `end`.
MeasuringWindow WindowEndingAt(std::vector<SimTime> arrivals, SimTime end, SimTime from = 0) {
  MeasuringWindow window;
  window.from = std::min(from, end);
  window.end = end;
  std::erase_if(arrivals, [&](SimTime arrival) { return arrival < from; });
  if (arrivals.empty()) return window;
  std::sort(arrivals.begin(), arrivals.end());
  const auto rank = static_cast<size_t>(std::ceil(0.01 * static_cast<double>(arrivals.size())));
  window.busy_from = std::min(arrivals[std::max<size_t>(rank, 1) - 1], end);
  window.fill_from = std::min(arrivals.front(), end);
  window.fill_end = std::min(arrivals.back() + kFillTail, end);
  return window;
}

}  // namespace

MeasuringWindow WindowOf(const Workload& workload) {
  std::vector<SimTime> arrivals;
  SimTime ideal_end = 0;
  for (const PodSpec& pod : workload.pods) {
    arrivals.push_back(pod.arrival);
    ideal_end = std::max(ideal_end, pod.arrival + pod.duration);
  }
  return WindowEndingAt(std::move(arrivals), ideal_end + kWindowTail, workload.measure_from);
}

IdleGpuHours IntegrateIdle(const std::vector<IdleSample>& samples, SimTime from, SimTime to) {
  IdleGpuHours hours{};
  for (size_t i = 0; i < samples.size(); ++i) {
    const SimTime start = std::max(samples[i].at, from);
    const SimTime end = std::min(i + 1 < samples.size() ? samples[i + 1].at : to, to);
    if (end <= start) continue;
    const double span = static_cast<double>(end - start) / static_cast<double>(kHour);
    for (size_t r = 0; r < history::kIdleReasons; ++r) hours[r] += span * samples[i].gpus[r];
  }
  return hours;
}

PolicySummary Summarise(const ReplayResult& result) {
  std::vector<SimTime> arrivals;
  for (const PodOutcome& pod : result.pods) arrivals.push_back(pod.arrival);
  return Summarise(result, WindowEndingAt(std::move(arrivals), result.end));
}

PolicySummary Summarise(const ReplayResult& result, const MeasuringWindow& window) {
  PolicySummary s;
  s.policy = result.policy;
  const WindowTotals totals = Integrate(result.timeline, window.from, window.end);
  s.provisioned_gpu_hours = totals.provisioned_gpu_hours;
  s.allocated_gpu_hours = totals.allocated_gpu_hours;
  s.idle_gpu_hours = totals.provisioned_gpu_hours - totals.allocated_gpu_hours;
  s.idle_share = totals.provisioned_gpu_hours > 0 ? s.idle_gpu_hours / totals.provisioned_gpu_hours : 0;
  s.node_hours = totals.node_hours;
  s.cost_dollars = totals.cost_dollars;
  const IdleGpuHours idle = IntegrateIdle(result.idle_samples, window.from, window.end);
  using history::IdleReason;
  s.idle_booting_gpu_hours = idle[static_cast<size_t>(IdleReason::kBooting)];
  s.idle_held_for_intent_gpu_hours = idle[static_cast<size_t>(IdleReason::kHeldForIntent)];
  s.idle_awaiting_scale_down_gpu_hours = idle[static_cast<size_t>(IdleReason::kAwaitingScaleDown)];
  s.idle_fragmented_gpu_hours = idle[static_cast<size_t>(IdleReason::kFragmented)];
  s.idle_no_demand_gpu_hours = idle[static_cast<size_t>(IdleReason::kNoDemand)];
  const WindowTotals busy = Integrate(result.timeline, window.busy_from, window.end);
  s.busy_idle_gpu_hours = busy.provisioned_gpu_hours - busy.allocated_gpu_hours;
  s.busy_idle_share = busy.provisioned_gpu_hours > 0 ? s.busy_idle_gpu_hours / busy.provisioned_gpu_hours : 0;
  const WindowTotals fill = Integrate(result.timeline, window.fill_from, window.fill_end);
  s.fill_idle_gpu_hours = fill.provisioned_gpu_hours - fill.allocated_gpu_hours;
  s.fill_idle_share = fill.provisioned_gpu_hours > 0 ? s.fill_idle_gpu_hours / fill.provisioned_gpu_hours : 0;
  s.fill_cost_dollars = fill.cost_dollars;
  for (const ScaleUpOutcome& scale_up : result.scale_ups) {
    if (scale_up.at < window.from) continue;
    ++s.scale_ups;
    s.stranded_scale_ups += scale_up.stranded;
    s.overtaken_scale_ups += scale_up.overtaken;
  }
  for (const NodeOutcome& node : result.nodes) {
    const SimTime until = std::min(node.removed >= 0 ? node.removed : window.end, window.end);
    const SimTime since = std::max(node.requested, window.from);
    if (until > since) {
      const double hours = static_cast<double>(until - since) / static_cast<double>(kHour);
      GroupSpend& spend = s.by_group[node.group];
      spend.node_hours += hours;
      spend.cost_dollars += hours * node.price_per_hour;
    }
    // A node a scale-up made: stranded when no pod it was grown for started on it within kStrandedAfter of Ready.
    if (node.scale_up < 0 || node.ready < 0 || node.requested < window.from) continue;
    ++s.new_nodes;
    const auto within = [&](SimTime start) { return start >= 0 && start <= node.ready + kStrandedAfter; };
    if (within(node.first_own_pod)) continue;
    ++s.stranded_nodes;
    s.empty_stranded_nodes += !within(node.first_pod);
    const SimTime unused_until = std::min(
        node.first_pod >= 0 ? node.first_pod : node.removed >= 0 ? node.removed : window.end, window.end);
    if (unused_until > node.requested) {
      s.stranded_node_hours += static_cast<double>(unused_until - node.requested) / static_cast<double>(kHour);
    }
  }
  s.nodes_created = result.nodes_created;
  s.peak_nodes = result.peak_nodes;
  s.provisioning_requests = result.provisioning_requests;
  s.vetoes = result.vetoes;
  s.gpu_sets_not_as_chosen = result.gpu_sets_not_as_chosen;
  s.failed_nodes = result.failed_nodes;
  s.evicted_pods = result.evicted_pods;
  s.evicted_multi_gpu_pods = result.evicted_multi_gpu_pods;
  s.lower_bound_cost_dollars = result.lower_bound_cost_dollars;
  s.hours = static_cast<double>(result.end) / static_cast<double>(kHour);
  s.window_hours = static_cast<double>(window.end) / static_cast<double>(kHour);
  s.measure_from_hours = static_cast<double>(window.from) / static_cast<double>(kHour);
  s.busy_from_hours = static_cast<double>(window.busy_from) / static_cast<double>(kHour);
  s.fill_from_hours = static_cast<double>(window.fill_from) / static_cast<double>(kHour);
  s.fill_end_hours = static_cast<double>(window.fill_end) / static_cast<double>(kHour);

  std::vector<double> all, multi_gpu, bursty;
  std::map<int, std::vector<double>> by_gpus;
  double stretch_sum = 0;
  int best = 0;
  for (const PodOutcome& pod : result.pods) {
    if (pod.arrival < window.from) continue;
    ++s.pods;
    s.requested_gpu_hours += pod.gpus * static_cast<double>(pod.ideal_duration) / static_cast<double>(kHour);
    const SimTime start = pod.first_start >= 0 ? pod.first_start : std::max(window.end, pod.arrival);
    if (pod.first_start < 0) ++s.pods_never_started;
    const double wait = static_cast<double>(start - pod.arrival) / static_cast<double>(kSecond);
    all.push_back(wait);
    by_gpus[pod.gpus].push_back(wait);
    if (pod.gpus >= 2) multi_gpu.push_back(wait);
    if (pod.bursty) bursty.push_back(wait);
    if (!pod.runs_until_deleted) {
      const SimTime done = pod.done >= 0 ? pod.done : std::max(window.end, pod.arrival);
      CompletionTimes& completion = s.completion_by_gpus[pod.gpus];
      ++completion.pods;
      completion.mean_hours += static_cast<double>(done - pod.arrival) / static_cast<double>(kHour);  // a sum until the end
    }
    if (pod.gpus >= 2 && pod.first_start >= 0) {
      ++s.multi_gpu_pods_started;
      stretch_sum += pod.stretch;
      best += pod.best_topology;
      s.slowdown_gpu_hours +=
          pod.gpus * (pod.stretch - 1) * static_cast<double>(pod.ideal_duration) / static_cast<double>(kHour);
    }
  }
  std::vector<double> gang_waits;
  for (const GangOutcome& gang : result.gangs) {
    if (gang.arrival < window.from) continue;
    ++s.gangs;
    s.gangs_started += gang.started >= 0;
    s.split_gangs += gang.split;
    const SimTime start = gang.started >= 0 ? gang.started : std::max(window.end, gang.arrival);
    gang_waits.push_back(static_cast<double>(start - gang.arrival) / static_cast<double>(kSecond));
  }
  s.gang_pending = PercentilesOf(std::move(gang_waits));
  s.partial_gang_gpu_hours = totals.partial_gang_gpu_hours;
  s.pending = PercentilesOf(std::move(all));
  s.pending_multi_gpu = PercentilesOf(std::move(multi_gpu));
  s.pending_bursty = PercentilesOf(std::move(bursty));
  for (auto& [gpus, waits] : by_gpus) s.pending_by_gpus[gpus] = PercentilesOf(std::move(waits));
  for (auto& [gpus, completion] : s.completion_by_gpus) completion.mean_hours /= completion.pods;
  if (s.multi_gpu_pods_started > 0) {
    s.mean_stretch = stretch_sum / s.multi_gpu_pods_started;
    s.best_topology_share = static_cast<double>(best) / s.multi_gpu_pods_started;
  }
  return s;
}

}  // namespace topofit::sim
