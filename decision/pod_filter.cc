#include "decision/pod_filter.h"

#include <utility>

namespace topofit::decision {

NodeVerdict JudgeNode(const GpuDemand& demand, const JudgedPod& pod, const NodeGpuSnapshot& node,
                      const CapacityHolds& holds, FilterMemo& memo, const CapacityAsk* ask) {
  return HoldsAndAskOn(demand, pod, node, holds, memo.FilterAndScore(demand, node).verdict, ask);
}

NodeVerdict HoldsAndAskOn(const GpuDemand& demand, const JudgedPod& pod, const NodeGpuSnapshot& node,
                          const CapacityHolds& holds, NodeVerdict verdict, const CapacityAsk* ask) {
  if (!verdict.fits || !demand.wants_gpus()) return verdict;
  if (std::optional<NodeVerdict> held = HeldBack(pod, node, holds, demand.request.gpus)) return *std::move(held);
  Refusal refusal = Refusal::kNone;
  if (holds.WaitsForCapacity(demand, pod.uid, verdict, node)) {
    refusal = Refusal::kWaitingForCapacity;
  } else if (ask != nullptr && !holds.HoldsFor(pod.uid) && AsksForCapacity(demand, verdict, *ask)) {
    refusal = Refusal::kAskingForCapacity;
  }
  if (refusal == Refusal::kNone) return verdict;
  // Refused for now, keeping the set it would have had for the reason (capacity_wait.h).
  verdict.fits = false;
  verdict.unresolvable = true;
  verdict.refusal = refusal;
  return verdict;
}

std::optional<NodeVerdict> HeldBack(const JudgedPod& pod, const NodeGpuSnapshot& node, const CapacityHolds& holds,
                                    int gpus) {
  if (holds.MayTake(pod, node, gpus)) return std::nullopt;
  NodeVerdict held;
  held.unresolvable = true;
  held.refusal = Refusal::kHeldForScaleUp;
  held.requested_gpus = gpus;
  held.held_gpus = holds.HeldOn(node);
  held.free_gpus = node.free().size();
  held.held_until = holds.HeldBackUntil(pod, node);
  return held;
}

std::string JudgedReasonText(const NodeVerdict& verdict, const JudgedPod& pod, const NodeGpuSnapshot& node,
                             const CapacityHolds& holds, const CapacityAsk* ask) {
  if (verdict.refusal == Refusal::kAskingForCapacity && ask != nullptr) return AskingReasonText(verdict, *ask);
  if (verdict.refusal == Refusal::kHeldForScaleUp || verdict.refusal == Refusal::kWaitingForCapacity) {
    return holds.ReasonText(pod, verdict, node);
  }
  return ReasonText(verdict, node.topology_origin);
}

PodFilterOutcome FilterPod(const GpuDemand& demand, const JudgedPod& pod, const std::vector<const NodeGpuSnapshot*>& nodes,
                           const CapacityHolds& holds, FilterMemo& memo, const CapacityAsk* ask) {
  PodFilterOutcome outcome;
  outcome.verdicts.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i + kPrefetchAhead < nodes.size()) PrefetchForJudging(*nodes[i + kPrefetchAhead]);
    outcome.Add(JudgeNode(demand, pod, *nodes[i], holds, memo, ask));
  }
  return outcome;
}

void PodFilterOutcome::Add(NodeVerdict verdict) {
  if (verdict.fits) {
    ++fitting;
  } else if (verdict.refusal == Refusal::kHeldForScaleUp || verdict.refusal == Refusal::kWaitingForCapacity) {
    held_back = true;
  } else if (verdict.refusal == Refusal::kAskingForCapacity) {
    preferred_set = PreferredSet::kAsked;
  }
  verdicts.push_back(std::move(verdict));
}

std::optional<UnplacedPod> UnplacedAfter(const kube::Pod& pod, const GpuDemand& demand, const PodFilterOutcome& outcome,
                                         std::vector<std::string> refused_nodes) {
  if (!demand.wants_gpus() || outcome.any_fits()) return std::nullopt;
  const bool needs_request = !refused_nodes.empty() && !outcome.held_back;
  return UnplacedPod{PreferenceFor(pod, demand, std::move(refused_nodes), outcome.preferred_set), needs_request};
}

}  // namespace topofit::decision
