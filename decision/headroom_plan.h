#pragma once

// Adaptive headroom (issue 34, docs/headroom.md): how many pods of each shape to keep warm capacity for, learned
// from the pods seen. Bursty inference cannot wait for a cold GPU node, and a static buffer is either too small
// for the next burst or idles GPUs between bursts; the planner sizes each shape's buffer to the rise in that
// shape's live pods (pending or running) expected while one node boots, at a chosen quantile, under a budget of
// GPUs, and shrinks with hysteresis so that a buffer never flaps. Pure: times come in, replicas go out; the
// controller (or the bench's replay) writes the answer as CapacityBuffers.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "kube/objects.h"

namespace topofit::decision {

// Pods alike to the autoscaler's choice of a node group and to the extender's judgement of a GPU set: the GPU
// count, the topology asked (topofit.io/min-link, min-bandwidth, topology-policy, as written) and the node-group
// family they may run on (the GPU products its node selector and required node affinity name, sorted; empty: any).
struct HeadroomShape {
  int gpus = 0;
  std::string min_link;
  std::string min_bandwidth;
  std::string topology_policy;
  std::string family;
  auto operator<=>(const HeadroomShape&) const = default;
  // "4gpu-nv-required-h100", for names and logs.
  std::string Name() const;
};

// The pod's shape; nullopt for a pod asking for no GPUs (nothing to keep warm for it).
std::optional<HeadroomShape> HeadroomShapeOf(const kube::Pod& pod);

struct HeadroomConfig {
  // The share of the pods rising over one boot that each shape's buffer is sized to cover (a fill rate, as
  // inventory is sized: a buffer of B covers min(rise, B) of every rise remembered, one per bucket).
  // 0.8: on the bench's bursty workloads it serves nearly every inference pod warm; 0.95 buys capacity that
  // shortens no wait there (bench/RESULTS.md, "Headroom").
  double quantile = 0.8;
  // How far back demand is remembered.
  absl::Duration window = absl::Hours(1);
  // Demand is summarised per bucket of this length (its first and its highest live count).
  absl::Duration bucket = absl::Minutes(1);
  // The boot a buffer must cover until nodes were seen to boot; then the 95th percentile of the boots seen.
  absl::Duration default_boot = absl::Minutes(10);
  // A buffer shrinks only after its target has stayed below it this long, and then to the highest target of
  // that time: short lulls between bursts keep the capacity.
  absl::Duration shrink_after = absl::Minutes(20);
  // The most GPUs all buffers may hold at once (a budget of that many GPU-hours per hour); 0: no limit.
  int budget_gpus = 0;
};

class HeadroomPlanner {
 public:
  explicit HeadroomPlanner(HeadroomConfig config);

  // The live pods (pending or running) of every shape at `at`; a shape not named has none. Times must not go
  // back.
  void ObserveLive(absl::Time at, const std::map<HeadroomShape, int>& live);
  // A node took `boot` from its request to Ready.
  void ObserveBoot(absl::Duration boot);

  // Replicas per shape to keep warm at `now` (shapes with none are left out), hysteresis applied: a call
  // changes what the next one holds, so call it once per decision.
  std::map<HeadroomShape, int> Plan(absl::Time now);

  // The boot a buffer covers now.
  absl::Duration Boot() const;
  // Before hysteresis and budget: the cover of each shape's rises over one boot at the fill rate, in the
  // remembered window.
  std::map<HeadroomShape, int> Targets(absl::Time now) const;
  // The targets the last Plan followed (what Targets(now) said then), by shape; shapes without one left out.
  const std::map<HeadroomShape, int>& last_targets() const { return targets_; }
  // The shape's rises the last Plan weighed, ascending (empty for a shape it did not).
  std::vector<int> RisesOf(const HeadroomShape& shape) const;
  const HeadroomConfig& config() const { return config_; }

 private:
  struct Bucket {
    absl::Time start;
    int first = 0;
    int peak = 0;
  };
  struct Held {
    int replicas = 0;
    absl::Time below_since = absl::InfiniteFuture();  // when the target first fell below `replicas`
    int highest_since = 0;                            // the highest target since then
  };
  // The rises over one boot starting in each remembered bucket, ascending.
  std::vector<int> Rises(const std::vector<Bucket>& buckets, absl::Time now) const;
  void Forget(absl::Time now);

  HeadroomConfig config_;
  std::map<HeadroomShape, std::vector<Bucket>> buckets_;
  std::vector<absl::Duration> boots_;  // the most recent, oldest first
  std::map<HeadroomShape, Held> held_;
  std::map<HeadroomShape, std::vector<int>> rises_;  // by the last Plan: what the budget ranks by
  std::map<HeadroomShape, int> targets_;              // by the last Plan
  bool observed_ = false;                            // ObserveLive was called before
};

// The smallest cover B with sum(min(rise, B)) >= fill_rate x sum(rise) over `ascending_rises`: a buffer of B
// pods serves that share of the pods that rose. 0 when nothing rose.
int FillRateCover(const std::vector<int>& ascending_rises, double fill_rate);

// Cuts `wanted` (replicas per shape) to at most `budget_gpus` GPUs over all shapes: replicas are kept in the
// order of the chance they are used per GPU they hold — the k-th replica of a shape is used when a rise of k or
// more comes, `rises` being that shape's remembered rises — so a budget first drops the large shapes' rare
// replicas. 0: no limit.
std::map<HeadroomShape, int> WithinBudget(const std::map<HeadroomShape, int>& wanted,
                                          const std::map<HeadroomShape, std::vector<int>>& rises, int budget_gpus);

}  // namespace topofit::decision
