#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "replay/expanders.h"
#include "replay/world.h"
#include "decision/filter_memo.h"
#include "decision/node_snapshot.h"
#include "ledger/ledger.h"

namespace topofit::sim {

// cluster-autoscaler's flags and constants the model uses (defaults are CA's).
struct AutoscalerConfig {
  SimTime scan_interval = 10 * kSecond;             // --scan-interval
  SimTime unneeded_time = 10 * kMinute;             // --scale-down-unneeded-time
  SimTime delay_after_add = 10 * kMinute;           // --scale-down-delay-after-add
  double utilization_threshold = 0.5;               // --scale-down-(gpu-)utilization-threshold
  int max_nodes_per_scale_up = 1000;                // --max-nodes-per-scaleup
  int max_empty_bulk_delete = 10;                   // --max-empty-bulk-delete
  int non_empty_candidates = 30;                    // --scale-down-non-empty-candidates-count
  SimTime new_pod_delay = 2 * kSecond;              // scale-up waits while the oldest pending pod is younger
  SimTime new_gpu_pod_delay = 30 * kSecond;         // ... or this, when a pending pod wants GPUs
  SimTime booking = 10 * kMinute;                   // ProvisioningRequest capacity booked in CA's simulation
  SimTime request_retry = 1 * kMinute;              // a request that found no capacity, first retry
  SimTime request_max_backoff = 10 * kMinute;
  SimTime max_node_provision_time = 15 * kMinute;  // --max-node-provision-time
  SimTime initial_backoff = 5 * kMinute;           // a group whose nodes did not come up: no scale-up for this
  SimTime max_backoff = 30 * kMinute;              // ... doubling up to this
  SimTime backoff_reset = 3 * kHour;               // ... and back to the start after this long without failures
};

// What one loop decided; the simulator carries it out.
struct AutoscalerActions {
  std::optional<ScaleUpOption> scale_up;
  int provisioning_request = -1;  // the request the scale-up serves, or -1
  std::vector<int> remove_empty;  // unneeded empty nodes to delete
  std::vector<int> remove_unready;  // nodes not Ready within the max node provision time
  int drain = -1;                 // an unneeded node whose pods are evicted before it is deleted
  // Whether topofit's expander was called this loop (CA's request carries every group's template).
  bool topofit_expander_called = false;
  bool acted() const { return scale_up.has_value() || !remove_empty.empty() || !remove_unready.empty() || drain >= 0; }
};

// One RunOnce of cluster-autoscaler as docs/bench.md ("The models") describes it: count-only scale-up
// (filter_out_schedulable onto real and upcoming nodes, the binpacking estimator per group, the expander
// chain, one group per loop), best-effort-atomic ProvisioningRequests (one per loop, alternating with
// ordinary pods), and scale-down of nodes unneeded for 10 minutes (GPU nodes judged on GPU utilisation).
// Nodes that never come up are given up after the max node provision time and back their group off.
// Simplifications, documented in docs/bench.md: the pod price model is GCE's, at most `non_empty_candidates`
// non-empty nodes are checked per loop.
class AutoscalerModel {
 public:
  AutoscalerModel(World& world, AutoscalerConfig config)
      : world_(world), config_(config), backoff_(world.groups().size()) {}

  // `state_changed`: the cluster changed since the last loop, so scale-down candidates are recomputed.
  AutoscalerActions RunLoop(const std::vector<decision::Preference>& preferences, bool state_changed);

  // The earliest time at which a loop could decide differently with nothing else changing (a delay or
  // a timer expiring); a large value when none is armed.
  SimTime NextTimer() const;

  // Whether the last loop found a node unneeded that scale-down may still remove (its group above its
  // minimum): the cluster is not settled yet.
  bool ScaleDownPending() const;

  const AutoscalerConfig& config() const { return config_; }
  // Loops in which topofit's expander vetoed every option.
  int vetoes() const { return vetoes_; }

 private:
  std::vector<int> UnschedulablePods() const;
  // Pods that fit the free capacity of Ready and upcoming nodes by count (next-fit, in queue order) are
  // dropped; `excluded` nodes and nodes booked for a ProvisioningRequest are not offered.
  std::vector<int> FilterOutSchedulable(const std::vector<int>& pods, const std::vector<int>& excluded) const;
  std::vector<ScaleUpOption> Estimate(const std::vector<int>& pods) const;
  // The expander chain's choice among `options` (ChooseOption), its vetoes counted and, when topofit's
  // expander is asked, the groups it was offered kept for the loop's actions.
  ExpanderChoice Expand(std::vector<ScaleUpOption> options, const std::vector<decision::Preference>& preferences);
  std::optional<ScaleUpOption> ScaleUpFor(const std::vector<int>& pods,
                                          const std::vector<decision::Preference>& preferences);
  std::optional<ScaleUpOption> HandleProvisioningRequest(int request,
                                                         const std::vector<decision::Preference>& preferences);
  // Nodes past the max node provision time are given up and their group backed off.
  void GiveUpUnready(AutoscalerActions& actions);
  bool BackedOff(int group) const;
  // Places the buffers' fake pods on the Ready nodes' `free` capacity (taking it); the pods placed by node.
  std::unordered_map<int, std::vector<int>> PlaceBufferPods(std::unordered_map<int, FreeCapacity>& free) const;
  void UpdateUnneeded();
  // Whether `pod` keeps CA from draining its node: it carries safe-to-evict "false" (PodSpec::safe_to_evict),
  // or the drain guard has it carry it now
  // (the extender's refresh, scheduler/drain_guard.h, taken as instantaneous).
  // `ready`: the Ready nodes' snapshots; `memo` serves the whole loop.
  bool KeptFromDrain(int pod, const std::vector<const decision::NodeGpuSnapshot*>& ready,
                     decision::FilterMemo& memo) const;
  void ScaleDown(AutoscalerActions& actions);

  World& world_;
  AutoscalerConfig config_;
  SimTime last_scale_up_ = -1;
  bool last_loop_served_request_ = false;
  std::vector<int> unneeded_;  // nodes found unneeded by the last recomputation
  int vetoes_ = 0;
  bool topofit_expander_called_ = false;  // this loop's, until RunLoop hands it over
  struct Backoff {
    SimTime until = -1;
    SimTime duration = 0;
    SimTime last_failure = -1;
  };
  std::vector<Backoff> backoff_;  // by group
};

}  // namespace topofit::sim
