#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "replay/world.h"
#include "decision/capacity_hold.h"
#include "decision/filter_memo.h"
#include "decision/pod_filter.h"
#include "decision/warm_capacity.h"
#include "topology/gpu_set.h"

namespace topofit::sim {

// What one scheduling cycle decided for a pod.
struct PlacementDecision {
  int node = -1;  // -1: unschedulable
  topology::GpuSet gpus;
  // Nodes passed kube-scheduler's own filters but topofit's filter refused every one of them: the pod
  // fits by count, not by its required topology (CA alone would never scale up for it).
  bool refused_for_topology = false;
  // The extender's filter cycle over the nodes kube-scheduler's own filters passed (decision/pod_filter.h):
  // their verdicts, whether a hold held the pod back, whether it asked for capacity. Empty for a pod the
  // extender does not see.
  decision::PodFilterOutcome filter;
  // The nodes the extender refused, in the order offered; when it refused them all, refused_nodes[i] is
  // the node of filter.verdicts[i]. Empty once the pod is placed.
  std::vector<int> refused_nodes;
};

// kube-scheduler's default profile as docs/bench.md ("The models") describes it: sample the feasible
// nodes (all below 100, else n * max(5, 50 - n/125) % from a rotating start), score LeastAllocated and
// BalancedAllocation over CPU and memory (GPUs are filtered, never scored), break ties at random. A policy
// with ResourceScoring::kMostAllocatedWithGpus scores NodeResourcesFit as the bin-packing profile does. With
// the policy's topofit extender, GPU pods also go through the extender's verdict (decision::JudgeNode:
// filter, then holds) and score (weight 5, as manifests/ configure it) and bind the set the filter chose,
// as the extender's bind does; without it the NVIDIA device plugin picks the GPU ids (go-gpuallocator's
// best-effort policy for several GPUs, a random free GPU for one). With Policy::gpu_api kDra the DRA
// allocator picks every pod's GPUs, first fit (dra_allocation.h), those of pods topofit's filter passed too.
class KubeSchedulerModel {
 public:
  explicit KubeSchedulerModel(World& world) : world_(world) {}

  // A full cycle over the Ready nodes.
  PlacementDecision Schedule(int pod);
  // The cycle for a pod that failed before when only `node` has changed since: every other node gives
  // the same verdict as then, so the answer is this node or none.
  PlacementDecision ScheduleOn(int pod, int node);

  // The extender's holds on new capacity (decision/capacity_hold.h) for the next calls; null: none.
  void set_holds(const decision::CapacityHolds* holds) { holds_ = holds != nullptr ? holds : &kNoHolds; }
  // What the next calls' pod needs to ask for capacity (decision/capacity_ask.h); null: it does not ask.
  void set_ask(const decision::CapacityAsk* ask) { ask_ = ask; }
  // The buffered sets the extender's score keeps whole (decision/warm_capacity.h): the world's
  // CapacityBuffers, as the extender reads them; empty: none.
  void set_warm(decision::WarmCapacity warm) {
    warm_ = std::move(warm);
    warm_memo_.clear();
  }

  // Pods bound by the extender whose GPU ids the device plugin or the DRA allocator gave differently
  // (Policy::gpu_ids, Policy::gpu_api).
  int gpu_sets_not_as_chosen() const { return gpu_sets_not_as_chosen_; }

  // kube-scheduler's numFeasibleNodesToFind for `nodes` nodes (percentageOfNodesToScore unset).
  static int FeasibleNodesToFind(int nodes);

 private:
  bool UsesExtender(int pod) const;
  // The extender's filter cycle for the pod over `nodes`, with the current holds and ask.
  decision::PodFilterOutcome ExtenderFilter(int pod, const std::vector<int>& nodes);
  // The extender's filter verdict and score for the pod on the node's current GPUs.
  const decision::FilterMemo::Entry& Extend(int pod, const SimNode& node);
  // The extender's prioritize score of a node that fits: Extend's, less the buffered sets the pod's set breaks.
  int64_t ExtenderScore(int pod, const SimNode& node);
  // kube-scheduler's own score for the node: NodeResourcesFit with the policy's scoring strategy, plus
  // BalancedAllocation.
  int64_t DefaultScore(int klass, const SimNode& node) const;
  int64_t MostAllocatedScore(int klass, const SimNode& node) const;
  // NodeAffinity's score, before its weight: the pod's preferred node affinity on the node.
  int64_t NodeAffinityScore(int klass, const SimNode& node) const;
  topology::GpuSet DevicePluginChoice(int pod, const SimNode& node, int gpus);
  // Who picks the GPU ids on the node when topofit does not: the device plugin, or the DRA allocator
  // (Policy::gpu_api).
  topology::GpuSet NodeAllocatorChoice(int pod, const SimNode& node, int gpus);
  topology::GpuSet GpusFor(int pod, const SimNode& node);

  static inline const decision::CapacityHolds kNoHolds;

  World& world_;
  const decision::CapacityHolds* holds_ = &kNoHolds;
  const decision::CapacityAsk* ask_ = nullptr;
  decision::WarmCapacity warm_;
  decision::WarmMemo warm_memo_;
  size_t next_start_ = 0;
  int gpu_sets_not_as_chosen_ = 0;
  // The replay meets few distinct (shape, GPUs in use, demand) cases: a bound well above them.
  decision::FilterMemo memo_{1 << 20};
};

// The extender's weight in the scheduler profile (manifests/base/scheduler/config.yaml).
inline constexpr int64_t kExtenderWeight = 5;

}  // namespace topofit::sim
