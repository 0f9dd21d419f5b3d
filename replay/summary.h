#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "replay/simulator.h"

namespace topofit::sim {

struct PendingPercentiles {
  int pods = 0;
  double p50_seconds = 0;
  double p95_seconds = 0;
  double p99_seconds = 0;
};

struct CompletionTimes {
  int pods = 0;
  double mean_hours = 0;
};

// The windows every policy of a comparison is measured over, fixed by the workload whatever policies run
// (issue 31: before, T was the latest last-pod completion among the policies compared, so adding a policy
// could move every other's figures).
struct MeasuringWindow {
  // Where every figure begins: the workload's measure_from, 0 but after a lead-in (workloads/lead_in.h).
  // GPU-hours, cost and nodes are counted from it; pods that arrived before it (the lead-in's) are not among
  // the pods counted. The windows below are written for from = 0: each starts at `from` at the earliest.
  SimTime from = 0;
  // T, the end of the whole window [0, T): kWindowTail after the latest ideal end (each pod's arrival plus
  // its run time on its best set) — what the workload needs, with room for the last nodes' scale-down.
  SimTime end = 0;
  // The busy window [busy_from, end): from the arrival of the first 1% of the pods (rank ceil(1% x n)),
  // so that a trace's long, nearly empty lead-in (openb: months before its burst) is reported apart.
  SimTime busy_from = 0;
  // The fill [fill_from, fill_end): from the first arrival to an hour after the last (capped at T), the
  // window the FGD paper measures its submit-in-order replay over, before the months-long tail of the
  // longest pods.
  SimTime fill_from = 0;
  SimTime fill_end = 0;
};

// After the latest ideal end: CA's scale-down of the last nodes (10 minutes unneeded, a loop) and a boot's
// worth of delay for the last pods, with room to spare.
inline constexpr SimTime kWindowTail = kHour;
// After the last arrival, the end of the fill window.
inline constexpr SimTime kFillTail = kHour;

// The window of a workload's replays (its pods in any order).
MeasuringWindow WindowOf(const Workload& workload);

// The report's row for one policy (issue 5, "Report"; issue 12, one window and node-level stranding).
// What one node group's nodes cost over a window: each node from its request to its removal (or the
// window's end).
struct GroupSpend {
  double node_hours = 0;
  double cost_dollars = 0;
};

struct PolicySummary {
  std::string policy;
  uint64_t seed = 0;
  // Over the measuring window [0, T).
  double provisioned_gpu_hours = 0;
  double allocated_gpu_hours = 0;
  double idle_gpu_hours = 0;
  double idle_share = 0;  // idle / provisioned
  double node_hours = 0;
  // The idle GPU-hours by why the GPUs were idle (history/idle_gpus.h, as topofit_idle_gpus classifies
  // them; sampled, ReplayResult::idle_samples): on booting nodes, held for an intent, on nodes awaiting
  // scale-down, fragmented (GPU pods pending, none of whose shapes fit), no demand.
  double idle_booting_gpu_hours = 0;
  double idle_held_for_intent_gpu_hours = 0;
  double idle_awaiting_scale_down_gpu_hours = 0;
  double idle_fragmented_gpu_hours = 0;
  double idle_no_demand_gpu_hours = 0;
  // Over the busy window [busy_from, T).
  double busy_idle_gpu_hours = 0;
  double busy_idle_share = 0;
  // Over the fill [fill_from, fill_end).
  double fill_idle_gpu_hours = 0;
  double fill_idle_share = 0;
  double fill_cost_dollars = 0;
  int scale_ups = 0;
  int stranded_scale_ups = 0;  // none of their nodes ran a pod they were made for within kStrandedAfter
  int overtaken_scale_ups = 0;  // of them, ScaleUpOutcome::overtaken
  // Nodes a scale-up created that became Ready; of them, those on which no pod they were grown for started
  // within kStrandedAfter of Ready (stranded), and those on which no pod at all did (empty).
  int new_nodes = 0;
  int stranded_nodes = 0;
  int empty_stranded_nodes = 0;
  // Of the stranded nodes, the hours in the window from their request until the first pod of any kind
  // started on them (or their removal, or T): paid for before they served anything.
  double stranded_node_hours = 0;
  int nodes_created = 0;
  int peak_nodes = 0;
  int provisioning_requests = 0;
  int vetoes = 0;
  int gpu_sets_not_as_chosen = 0;
  int failed_nodes = 0;  // requested nodes that never became Ready
  int evicted_pods = 0;  // evicted by CA's scale-down drains
  int evicted_multi_gpu_pods = 0;
  int pods = 0;
  int pods_never_started = 0;
  // Time from creation to first start. Pods that never started count with the replay's end as their
  // start: a floor on their wait.
  PendingPercentiles pending;
  PendingPercentiles pending_multi_gpu;              // pods of two GPUs or more
  PendingPercentiles pending_bursty;                 // inference pods (PodOutcome::bursty)
  std::map<int, PendingPercentiles> pending_by_gpus;  // GPUs requested -> percentiles
  // Of the pods that run to completion (not replicas that run until deleted): the time from creation to
  // the end of their run — pending, the run on the set they got, any restart after an eviction — by GPUs
  // requested. A pod not done counts as done at T (a floor, as a pod never started counts as starting
  // then). What a pod that waits for a better set (capacity_wait.h) trades: a longer wait, a shorter run.
  std::map<int, CompletionTimes> completion_by_gpus;
  int multi_gpu_pods_started = 0;
  double best_topology_share = 0;  // of multi-GPU pods started: their set had the shape's best bandwidth
  double mean_stretch = 1;         // of multi-GPU pods started (slowdown.h)
  double slowdown_gpu_hours = 0;   // GPU-hours spent beyond the ideal run time because of the placement
  double cost_dollars = 0;
  // cost_dollars and node_hours by node group (groups whose nodes the window saw): where the money went.
  std::map<std::string, GroupSpend> by_group;
  // Gangs (PodSpec::gang): how many, how many ran whole, how many ran over more than the level they asked
  // for, the time from creation to the last member's start (pending: never-started gangs count with the
  // window's end), and the GPU-hours members held while their gang waited for the rest.
  int gangs = 0;
  int gangs_started = 0;
  int split_gangs = 0;
  PendingPercentiles gang_pending;
  double partial_gang_gpu_hours = 0;
  double lower_bound_cost_dollars = 0;
  double requested_gpu_hours = 0;  // the pods' ideal GPU-hours: a floor under allocated
  double hours = 0;                // the policy's own last pod completion
  double window_hours = 0;         // T
  double measure_from_hours = 0;   // MeasuringWindow::from
  double busy_from_hours = 0;      // the busy window's start
  double fill_from_hours = 0;      // the fill's start and end
  double fill_end_hours = 0;
};

// The summary over `window`. Pods that never started count with the window's end as their start.
PolicySummary Summarise(const ReplayResult& result, const MeasuringWindow& window);
// Over the replay's own window [0, its last pod completion), the busy window from 1% of the arrivals and
// the fill from its first arrival, both to that end at most: one replay's figures on their own.
PolicySummary Summarise(const ReplayResult& result);

// GPU-hours by idle reason (indexed by history::IdleReason) over [from, to): each sample held until the
// next, the last one until `to`.
using IdleGpuHours = std::array<double, history::kIdleReasons>;
IdleGpuHours IntegrateIdle(const std::vector<IdleSample>& samples, SimTime from, SimTime to);

// Nearest-rank percentile of `values` (sorted ascending), 0 for none.
double Percentile(const std::vector<double>& sorted, double percentile);

}  // namespace topofit::sim
