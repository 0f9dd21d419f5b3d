#pragma once

// Warm capacity kept whole (issue 34, docs/headroom.md, "The extender keeps buffered sets whole").
// A CapacityBuffer keeps free GPUs warm for the pods of its shape, and cluster-autoscaler counts them by
// number alone: a 1-GPU pod that lands in a free 4-GPU NVLink set leaves the buffer's GPUs counted warm
// and its set broken, and the 4-GPU pod the buffer was for waits for a cold node after all. The extender
// scores such a placement down by the GPUs of buffered sets it breaks beyond its own, so that a pod goes
// where it breaks none while such a node exists. Only the score: refusing would make the pod wait for a
// node, which is what the buffer is there to spare.

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "decision/filter_memo.h"
#include "decision/node_snapshot.h"
#include "decision/pod_demand.h"
#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::decision {

// One buffer: what a pod of its shape asks (its pod template's demand) and how many pods it keeps warm.
struct WarmShape {
  GpuDemand demand;
  int replicas = 0;
};

// KeptReplicas worked out once per (topology, free GPUs): a replay or a request meets few distinct cases.
// Valid for one WarmCapacity; not thread-safe.
using WarmMemo = absl::flat_hash_map<std::pair<const topology::Topology*, uint32_t>, std::vector<int>>;

class WarmCapacity {
 public:
  WarmCapacity() = default;  // keeps nothing
  // Shapes asking for no GPUs, or with no replicas, are left out.
  explicit WarmCapacity(std::vector<WarmShape> shapes);

  bool empty() const { return shapes_.empty(); }
  // The buffers kept, most GPUs first.
  const std::vector<WarmShape>& shapes() const { return shapes_; }

  // How many of each shape's buffered pods (in the order of shapes()) `free` gives a whole set on
  // `topology`: the shapes most GPUs first, each taking the set the allocator would give it (its topology ask
  // binding: a set below it is no warm capacity for the pods asking it), again while replicas are left and a
  // set fits.
  std::vector<int> KeptReplicas(const topology::Topology& topology, topology::GpuSet free,
                                WarmMemo* memo = nullptr) const;
  // Their GPUs.
  int KeptGpus(const topology::Topology& topology, topology::GpuSet free, WarmMemo* memo = nullptr) const;

  // GPUs of the buffered sets that a pod taking `taken` of `node`'s free GPUs leaves no longer whole, its
  // own among them: each shape's replicas kept before and not after, times its GPUs. A set broken counts
  // whole even where smaller shapes take its remains: the buffer of its shape is short of it. More than 0
  // when the pod starts on buffered capacity.
  int LostGpus(const NodeGpuSnapshot& node, topology::GpuSet taken, WarmMemo* memo = nullptr) const;
  // What it breaks beyond `taken` itself (LostGpus less the pod's own): 0 for a pod that takes a buffered
  // set of its size or GPUs outside every buffered set.
  int BrokenGpus(const NodeGpuSnapshot& node, topology::GpuSet taken, WarmMemo* memo = nullptr) const;

 private:
  std::vector<WarmShape> shapes_;  // most GPUs first
};

// The most extender points breaking buffered sets costs a node: what packing and cohesion weigh together
// in its score (topology/node_score.h). A node whose set meets the pod's topology ask in full still
// outscores every node whose set misses it.
inline constexpr int64_t kWarmBreakPoints = 4;

// A prioritize score (0..10) less what breaking `broken_gpus` of buffered sets costs a pod asking for
// `requested_gpus`: kWarmBreakPoints x broken / (broken + requested), rounded up, so that any break costs
// a point and a small pod breaking a large set costs nearly all of them.
int64_t WarmKeptScore(int64_t score, int broken_gpus, int requested_gpus);

// The prioritize score of `node` for a pod asking `demand`, whose filter and score there are `filtered`
// (FilterMemo's): the score less the buffered sets the chosen set breaks. The extender's and the replay's.
int64_t WarmKeptScore(const WarmCapacity& warm, const GpuDemand& demand, const FilterMemo::Entry& filtered,
                      const NodeGpuSnapshot& node, WarmMemo* memo = nullptr);

}  // namespace topofit::decision
