#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "decision/capacity_hold.h"
#include "decision/filter_memo.h"
#include "decision/intent.h"
#include "decision/node_snapshot.h"
#include "decision/pod_demand.h"
#include "decision/preference.h"

namespace topofit::history {

// Why a free GPU is idle: a closed set, in the order a GPU is classified by (the first that applies).
enum class IdleReason : uint8_t {
  kBooting,            // its node is not Ready yet
  kHeldForIntent,      // held for the pods a scale-up brought its node for (decision/capacity_hold.h)
  kAwaitingScaleDown,  // its node runs nothing: cluster-autoscaler removes it once unneeded long enough
  kFragmented,         // GPU pods are pending, and none of their shapes fits the node's free GPUs
  kNoDemand,           // nothing pending could use it (or what could is about to)
};
inline constexpr size_t kIdleReasons = 5;

// "booting", "held-for-intent", "awaiting-scale-down", "fragmented", "no-demand".
absl::string_view IdleReasonName(IdleReason reason);

// A node's free GPUs by reason (indexed by IdleReason).
using IdleCounts = std::array<int, kIdleReasons>;

// What the classification knows of a node beyond its GPUs.
struct NodeActivity {
  bool ready = true;
  // Pods without GPUs run on it. The replay knows; the extender's GPU snapshot does not, and counts a node
  // as running nothing when no GPU of it is held.
  bool runs_pods_without_gpus = false;
};

// Classifies `node`'s free GPUs: all of them booting when it is not Ready; else `held` of them (at most
// the free ones) held for an intent; the rest awaiting scale-down when the node runs nothing (no GPU held,
// no pod without GPUs: a node kept by its CPU pods is not waiting for CA, issue 31), fragmented when some
// pending GPU pod exists (`pending`, their demands) and no pending demand fits the node's free GPUs
// (decision::FilterNode, through `memo`), else no demand. Pure.
IdleCounts ClassifyIdleGpus(const decision::NodeGpuSnapshot& node, NodeActivity activity, int held,
                            const std::vector<decision::GpuDemand>& pending, decision::FilterMemo& memo);

// Every node's free GPUs by reason, activity[i] nodes[i]'s: ClassifyIdleGpus with the GPUs `holds` holds
// on each for intents. The one classification behind topofit_idle_gpus (scheduler/idle_gpus_gauge.h)
// and the bench's idle GPU-hours by reason (replay/simulator.h); only what they know of pending demand
// differs (the extender: its ledger's preferences, PreferredDemand; the replay: every pending GPU pod).
std::vector<IdleCounts> ClassifyNodes(const std::vector<const decision::NodeGpuSnapshot*>& nodes,
                                      const std::vector<NodeActivity>& activity, const decision::CapacityHolds& holds,
                                      const std::vector<decision::GpuDemand>& pending, decision::FilterMemo& memo);

// What a pending pod with a ledger preference asks: its shape, required (it was refused at it).
decision::GpuDemand PreferredDemand(const decision::Preference& preference);

// One node's idle GPUs: what `topofit_idle_gpus`, the idle records and `topofit explain idle` show.
struct NodeIdleGpus {
  std::string node{};
  std::string node_group{};  // the node-pool label (EKS, eksctl, GKE, AKS), else the instance type
  topology::GpuSet free{};
  IdleCounts counts{};
  friend bool operator==(const NodeIdleGpus&, const NodeIdleGpus&) = default;
};

// `node`'s idle GPUs as `counts` classify them (ClassifyNodes), with its node group.
NodeIdleGpus IdleOf(const decision::NodeGpuSnapshot& node, const IdleCounts& counts);

// The extender's view: ClassifyNodes with each node's readiness as its snapshot has it (the node watch's
// Ready condition: a booting node's free GPUs are `booting`), the holds of the intents, the pending demand
// of the ledger's preferences (PreferredDemand). In `nodes`' order. Pure.
std::vector<NodeIdleGpus> ClassifyIdleNodes(const std::vector<const decision::NodeGpuSnapshot*>& nodes,
                                            const std::vector<decision::Intent>& intents,
                                            const std::vector<decision::Preference>& preferences);

}  // namespace topofit::history
