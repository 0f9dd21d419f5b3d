#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "replay/autoscaler_model.h"
#include "replay/policy.h"
#include "replay/world.h"
#include "replay/workload.h"
#include "history/idle_gpus.h"
#include "history/recorder.h"

namespace topofit::sim {

struct ReplayOptions {
  uint64_t seed = 1;
  AutoscalerConfig autoscaler;
  // topofit deletes a ProvisioningRequest whose pod is still pending this long after it was provisioned
  // (the capacity went elsewhere), and creates a new one the next time the pod is refused.
  SimTime request_timeout = 15 * kMinute;
  // The replay stops here even with pods left (0: when nothing can change any more).
  SimTime horizon = 0;
  // Called now and then with the share of pods finished, 0..1.
  std::function<void(double)> progress;
  // Where topofit's decisions are recorded, stamped with replay time (null: nowhere): the preferences and
  // capacity requests of refused pods, the expander's rankings and intents, and binds.
  history::DecisionRecorder* recorder = nullptr;
};

// What happened to one pod.
struct PodOutcome {
  int gpus = 0;
  SimTime arrival = 0;
  SimTime first_start = -1;  // -1: never started
  SimTime ideal_duration = 0;
  double stretch = 1;        // of its first placement
  bool best_topology = false;
  int evictions = 0;
  bool runs_until_deleted = false;  // a replica: it has no run to complete
  SimTime done = -1;                // when its run completed (restarts after evictions included); -1: not yet
  bool bursty = false;              // an inference pod (PodSpec::kind): what headroom is kept for
};

// A new node is stranded when no pod it was grown for started on it within this long of becoming Ready
// (the scale-down unneeded time: CA would start removing it then). The per-scale-up figure uses it too.
inline constexpr SimTime kStrandedAfter = 10 * kMinute;

// How one scale-up fared: stranded when none of its nodes ran any pod it was made for within
// kStrandedAfter of becoming Ready.
struct ScaleUpOutcome {
  std::string group;
  int nodes = 0;
  SimTime at = 0;
  bool for_provisioning_request = false;
  bool stranded = false;
  // Stranded because it came too late: every pod it was made for had started elsewhere before its first
  // node was Ready (capacity freed or came up meanwhile). Its nodes' boot and unneeded time are the price
  // of scaling up at once rather than waiting for that capacity.
  bool overtaken = false;
};

// How one gang fared (PodSpec::gang).
struct GangOutcome {
  std::string name;
  int members = 0;
  int gpus = 0;  // over all its members
  std::string level;  // the level it asks for: "domain", "node" or empty
  bool required = false;
  SimTime arrival = 0;
  SimTime started = -1;  // when its run first began (its last member started); -1: never
  bool split = false;    // it ran over more than its level (SimGang::split)
};

struct NodeOutcome {
  std::string name;
  std::string group;
  double price_per_hour = 0;  // its group's
  SimTime requested = 0;
  SimTime ready = -1;    // -1: removed before it became Ready
  SimTime removed = -1;  // -1: still there at the end
  int scale_up = -1;     // index into ReplayResult::scale_ups; -1 for the initial nodes
  SimTime first_pod = -1;        // the first start of any pod on it; -1: none
  SimTime first_own_pod = -1;    // the first start of a pod its scale-up was made for; -1: none
};

// The replay's idle GPUs by reason at `at` (history/idle_gpus.h: the classification behind the
// topofit_idle_gpus metric), held until the next sample.
struct IdleSample {
  SimTime at = 0;
  history::IdleCounts gpus{};
};

// The cluster is classified at most this often, after a change (every Ready or booting node's free GPUs
// against every pending GPU pod's shape): idle GPU-hours by reason are sampled, the idle total is exact.
inline constexpr SimTime kIdleSampleInterval = kMinute;

struct ReplayResult {
  std::string policy;
  std::vector<NodeOutcome> nodes;  // every node the replay had, initial ones first
  std::vector<PodOutcome> pods;  // in workload order
  std::vector<ScaleUpOutcome> scale_ups;
  std::vector<GangOutcome> gangs;  // in order of their first pod
  // Every change of the cluster's totals, from 0 until the replay stopped: after the last pod completion
  // it goes on until scale-down has removed what it will, so that the totals can be integrated over a
  // window longer than this replay's own (window.h); the last point holds from then on.
  std::vector<TimelinePoint> timeline;
  // From 0 until the replay stopped, as the timeline: the last sample holds from then on.
  std::vector<IdleSample> idle_samples;
  // Up to `end` (the replay's own window).
  double provisioned_gpu_hours = 0;
  double allocated_gpu_hours = 0;
  double cost_dollars = 0;
  int nodes_created = 0;
  int peak_nodes = 0;
  int provisioning_requests = 0;
  int vetoes = 0;
  int gpu_sets_not_as_chosen = 0;  // extender-bound pods the device plugin gave other GPU ids (Policy::gpu_ids)
  int failed_nodes = 0;  // never became Ready; given up after the max node provision time
  // Pods CA's scale-down evicted to drain a node (its simulation places them elsewhere by count and
  // the scheduler's filters, not the extender's), and of them those with two or more GPUs.
  int evicted_pods = 0;
  int evicted_multi_gpu_pods = 0;
  // A floor under any policy's cost: every GPU pod's ideal GPU-hours at the cheapest per-GPU price of
  // the groups it may run on (product and size) that can give its required topology, as if GPUs were
  // bought by the GPU-hour.
  double lower_bound_cost_dollars = 0;
  SimTime end = 0;  // the last pod completion (the replay's stop when no pod ever finished)
  int64_t events = 0;
};

// Replays `workload` under `policy`: a discrete-event simulation on a simulated clock, deterministic for
// a seed. Scheduling cycles take no simulated time; CA loops run every scan interval while anything can
// change. InvalidArgument when the workload cannot be built (a node group whose shape does not resolve,
// a pod whose annotations topofit rejects).
absl::StatusOr<ReplayResult> Replay(const Workload& workload, const Policy& policy, const ReplayOptions& options);

}  // namespace topofit::sim
