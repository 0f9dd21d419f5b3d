#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "decision/capacity_wait.h"
#include "decision/filter.h"
#include "decision/filter_memo.h"
#include "decision/intent.h"
#include "decision/node_snapshot.h"
#include "decision/pod_demand.h"
#include "decision/preference.h"

namespace topofit::decision {

// New capacity a scale-up brought for some pods is held for them, so that a node bought for an 8-GPU
// NVLink job is not fragmented by 1-GPU pods before the job lands (DESIGN.md, "The ledger"). On a node an
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
// A pod the new capacity is held for, and that only prefers its topology, also waits for it rather than
// take a poorer set elsewhere, while that pays (capacity_wait.h: WaitForComingCapacity).
//
// Built once per request from the ledger's intents (the GPUs held: Intent::pod_gpus of the pods still in
// it), preferences (the pods' names, for the reason), the nodes known and the time of the request; pure
// and cheap to query per node.
struct HoldContext {
  std::optional<absl::Time> now;  // unset: no pod waits
  CapacityWaitPolicy wait;
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

  // GPUs of `node` held for pods other than `pod_uid` (of each intent holding it, what its pending pods
  // would take of this node: their GPUs packed first-fit decreasing over the intent's nodes); 0 when none.
  int HeldAgainst(absl::string_view pod_uid, const NodeGpuSnapshot& node) const;

  // The words for a kHeldForScaleUp verdict of `pod_uid` on `node`: which scale-ups hold it for whom; for
  // a kWaitingForCapacity verdict, which scale-up the pod waits for and until when.
  std::string ReasonText(absl::string_view pod_uid, const NodeVerdict& verdict, const NodeGpuSnapshot& node) const;

  // One intent whose pods still wait, and what it holds.
  struct Held {
    Intent intent;
    std::map<std::string, int> gpus_on;  // node -> GPUs held on it for the intent's pending pods
    std::vector<std::string> pods;  // their namespace/name where known, else uid
    std::vector<std::string> nodes;  // the nodes its scale-up brought (at most intent.node_count)
  };
  // Every hold, oldest intent first: what the ledger's readers (MCP get_ledger) show.
  const std::vector<Held>& held() const { return held_; }

 private:
  // The holds on `node` that bind `pod_uid`.
  std::vector<const Held*> Holding(absl::string_view pod_uid, const NodeGpuSnapshot& node) const;
  // The youngest intent that holds capacity for `pod_uid` (its GPUs in Intent::pod_gpus); null when none.
  const Held* HeldFor(absl::string_view pod_uid) const;
  // The best bandwidth of a set of `gpus` on the held intent's group (its nodes' labels, through the
  // catalog); 0 when they resolve to no topology.
  int64_t ComingBandwidth(const Held& held, int gpus) const;

  std::vector<Held> held_;  // the intents whose pods still wait
  HoldContext context_;
};

// The extender's verdict on a node for a pod, as filter and bind give it: FilterNode (through `memo`),
// then the holds. A hold refuses a node the pod fits as unresolvable: evicting running pods cannot
// release GPUs held for pods not running yet, so preemption would only harm; the pod retries after the
// hold. One function for the extender and the replay.
NodeVerdict JudgeNode(const GpuDemand& demand, absl::string_view pod_uid, const NodeGpuSnapshot& node,
                      const CapacityHolds& holds, FilterMemo& memo);

// The words for any verdict of JudgeNode (its FailedNodes reason).
std::string JudgedReasonText(const NodeVerdict& verdict, absl::string_view pod_uid, const NodeGpuSnapshot& node,
                             const CapacityHolds& holds);

}  // namespace topofit::decision
