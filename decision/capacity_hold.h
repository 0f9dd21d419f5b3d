#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "decision/capacity_wait.h"
#include "decision/filter.h"
#include "decision/intent.h"
#include "decision/node_snapshot.h"
#include "decision/pod_demand.h"
#include "decision/preference.h"
#include "kube/objects.h"

namespace topofit::decision {

// New capacity a scale-up brought for some pods is held for them, so that a node bought for an 8-GPU
// NVLink job is not fragmented by 1-GPU pods before the job lands (docs/extender.md, "Holding new capacity for the pods it was bought for"). On a node an
// intent brought, a GPU pod the intent is not for may take GPUs only while enough stay free for the
// intent's pods that are still pending (those with a live preference: a pod leaves the intent when it
// binds or goes). The hold ends with the intent's pods or its expiry.
//
// Which nodes an intent brought: a scale-up of `node_count` nodes brings that many, so an intent holds at
// most `node_count` nodes — the first ones, in creation order, that carry its group's labels and were
// created after it was recorded (node_group_identity.h), and that an older intent of the group has not
// taken. Later scale-ups of the same group (for other pods) bring nodes no intent holds: holding them too
// kept whole nodes empty while the pods they were grown for waited (Azure LLM, issue 13).
//
// The holds of one group are one pool: the nodes its scale-ups brought, held for the pods of all of them.
// Nodes of a group are alike, so which of the pool's pods takes which node does not matter — only that
// the pool's pods still fit. A pod of the pool may take any of its nodes as long as the pool's other pods
// fit what is left as well as all of them did before (first-fit decreasing over the pool's free GPUs,
// nodes still to come counted as unplaced demand); per-intent holds
// made a pod wait for the node of its own scale-up while an equal one, brought for a pod behind it in the
// queue, stood idle (Azure LLM's multi-GPU p95, issue 13).
//
// A pod the new capacity is held for, and that only prefers its topology, also waits for it rather than
// take a poorer set elsewhere, while that pays (capacity_wait.h: WaitForComingCapacity).
//
// Built once per request from the ledger's intents (the GPUs held: Intent::pod_gpus of the pods still in
// it), preferences (the pods' names, for the reason), the nodes known and the time of the request; pure
// and cheap to query per node.
struct HoldContext {
  std::optional<absl::Time> now;  // unset: no pod waits, and none is late
  CapacityWaitPolicy wait;
};

// The pod a hold is weighed against: the uid the ledger knows it by and when it was created (nullopt:
// unknown). A hold keeps a pod off new capacity only while the pod is not late: pending for more than
// kLateBoots expected boots, whatever capacity CA counted it onto should have come and has not (a node
// that never comes up is given up only at CA's max node provision time, 15 minutes). Holding it back
// further would only let a younger pod go ahead of it, against kube-scheduler's queue order (the
// held-out Azure LLM with nodes failing, issue 13).
inline constexpr int kLateBoots = 2;
struct JudgedPod {
  // Not explicit: call sites write {uid} or {uid, created}.
  JudgedPod(absl::string_view uid, std::optional<absl::Time> created = std::nullopt) : uid(uid), created(created) {}
  // The pod's uid (a view: `pod` must outlive the result) and its metadata.creationTimestamp, when set.
  static JudgedPod Of(const kube::Pod& pod);
  absl::string_view uid;
  std::optional<absl::Time> created;
};

class CapacityHolds {
 public:
  CapacityHolds() = default;  // holds nothing
  CapacityHolds(const std::vector<Intent>& intents, const std::vector<Preference>& preferences,
                const std::vector<const NodeGpuSnapshot*>& nodes, const HoldContext& context = {});

  // Whether the pod, for which an intent holds capacity not on `node`, should wait for it rather than
  // take `fitted` (FilterNode's verdict on `node`, which fits): WaitForComingCapacity against the best
  // set of the pod's size the intent's group gives. The intent's nodes themselves are never refused.
  bool WaitsForCapacity(const GpuDemand& demand, absl::string_view pod_uid, const NodeVerdict& fitted,
                        const NodeGpuSnapshot& node) const;

  // GPUs of `node` held for pending pods: what they would take of it, their GPUs packed first-fit
  // decreasing over the nodes their group's scale-ups brought; 0 when none.
  int HeldOn(const NodeGpuSnapshot& node) const;

  // Whether `pod` may take `gpus` of `node` (which has them free) despite the holds: a pod outside the
  // pool holding the node when the GPUs held on it stay free, or when it is late (JudgedPod); a pod of the
  // pool when its other pending pods leave no more GPUs unplaced than the pool's pending pods did before.
  bool MayTake(const JudgedPod& pod, const NodeGpuSnapshot& node, int gpus) const;

  // When the holds on `node` stop keeping `pod` off it: when the pod becomes late, if it is outside the pool
  // holding the node and its creation time is known; nullopt otherwise (no pool holds the node, or the pod
  // is one of the pool's, whom the pool's own rule weighs however long it waits).
  std::optional<absl::Time> HeldBackUntil(const JudgedPod& pod, const NodeGpuSnapshot& node) const;

  // Whether capacity is held for `pod_uid` (a scale-up was made for it and it is still pending).
  bool HoldsFor(absl::string_view pod_uid) const { return HeldFor(pod_uid) != nullptr; }

  // The words for a kHeldForScaleUp verdict of `pod` on `node` (RefusalText's) and which scale-ups hold it
  // for whom; for a kWaitingForCapacity verdict, which scale-up the pod waits for and until when.
  std::string ReasonText(const JudgedPod& pod, const NodeVerdict& verdict, const NodeGpuSnapshot& node) const;

  // The holds of one node group (see above).
  struct Pool {
    std::string node_group;
    std::vector<std::string> members;  // every pod its scale-ups were made for, held for or not
    struct HeldPod {
      int gpus = 0;
      absl::Time scaled_up;  // when its scale-up was chosen
    };
    std::map<std::string, HeldPod> pending;  // the pods held for (still pending), by uid
    std::vector<std::string> pods;  // the pods held for: namespace/name where known, else uid
    std::vector<std::string> nodes;  // the nodes its scale-ups brought, in creation order
    std::vector<int> free;  // their free GPUs
    std::vector<int> held;  // of each, what the pending pods would take (first-fit decreasing)
    int unplaced = 0;  // the pending pods' GPUs that fit none of them whole (their nodes still to come)
    // The best bandwidth of a set of n GPUs on the group's nodes (index n; their labels through the
    // catalog), resolved once; empty when they resolve to no topology or nobody may wait.
    std::vector<int64_t> coming_mbps;
  };
  // Every pool whose pods still wait, by group name: what the ledger's readers (MCP get_ledger) show.
  const std::vector<Pool>& pools() const { return pools_; }

 private:
  // The pool whose pending pods include `pod_uid`; null when none.
  const Pool* HeldFor(absl::string_view pod_uid) const;
  // The pool that holds `node`, whoever asks, and the node's index in it; pool null when none.
  struct PoolNode {
    const Pool* pool = nullptr;
    size_t index = 0;
  };
  PoolNode PoolOf(const NodeGpuSnapshot& node) const;
  // When `pod` becomes late (JudgedPod); nullopt when its creation time or the time now is unknown.
  std::optional<absl::Time> LateFrom(const JudgedPod& pod) const;

  std::vector<Pool> pools_;  // the groups whose pods still wait
  HoldContext context_;
};

}  // namespace topofit::decision
