// The extender's filter and prioritize for pods whose GPUs come from ResourceClaims (docs/dra.md): the
// claims' demand (decision/claim_demand.h) judged on each node's GPUs as its slices publish them
// (decision/claim_fit.h). kube-scheduler's DRA plugin allocates the devices and the claim watch then
// counts them, so bind takes no GPU for such a pod: it only binds. The rest of the verbs are in extender.cc.

#include "absl/strings/str_cat.h"
#include "decision/pod_filter.h"
#include "decision/pod_uid.h"
#include "decision/prioritize.h"
#include "history/from_decisions.h"
#include "scheduler/extender.h"
#include "server/logging.h"

namespace topofit::scheduler {

using decision::GpuDemand;
using decision::NodeGpuSnapshot;

void Extender::JudgeClaimsWith(const DraView* dra) {
  dra_ = dra;
  claims_ = {};
  if (dra == nullptr) return;
  claims_.claim = [dra](absl::string_view ns, absl::string_view name) { return dra->Claim(ns, name); };
  claims_.classes = dra->gpu_classes();
}

absl::StatusOr<std::optional<decision::ClaimGpuDemand>> Extender::ClaimDemandOf(const kube::Pod& pod,
                                                                               const GpuDemand& demand) const {
  if (dra_ == nullptr) return std::nullopt;
  return decision::PodClaimDemandOf(pod, demand, claims_);
}

decision::ClaimNodeVerdict Extender::JudgeClaims(const decision::ClaimGpuDemand& claims, const GpuDemand& demand,
                                                 const NodeGpuSnapshot& node) const {
  return decision::JudgeClaimsOnNode(claims, demand, dra_->NodeGpus(node.node), node, dra_->gpu_classes().driver);
}

codec::ExtenderFilterResult Extender::FilterClaimPod(const codec::ExtenderArgs& args, const GpuDemand& demand,
                                                     const decision::ClaimGpuDemand& claims, RequestNodes nodes) {
  const std::string pod_key = absl::StrCat(args.pod.metadata.namespace_name, "/", args.pod.metadata.name);
  {
    std::lock_guard<std::mutex> lock(gangs_mu_);
    ExpireGangs();
    nodes.snapshots = WithoutReserved(std::move(nodes.snapshots), {});
  }
  codec::ExtenderFilterResult result;
  if (args.nodes) result.nodes.emplace(); else result.node_names.emplace();
  result.failed_and_unresolvable_nodes.insert(nodes.unresolved.begin(), nodes.unresolved.end());
  result.failed_nodes.insert(nodes.unknown.begin(), nodes.unknown.end());
  // Capacity grown for other pods is held from claim pods as from device-plugin pods (capacity_hold.h).
  const GpuDemand counted = decision::CountedDemand(demand, claims);
  const decision::CapacityHolds holds = HoldsNow(counted);
  const decision::JudgedPod judged_pod = decision::JudgedPod::Of(args.pod);
  const bool recording = recorder_ != nullptr;
  history::FilterCandidates candidates(recording ? nodes.snapshots.size() + nodes.unresolved.size() : 0);
  decision::PodFilterOutcome outcome;  // the claims' verdicts, as the device-plugin pods' cycle folds them
  std::vector<std::string> refused;
  for (size_t i = 0; i < nodes.snapshots.size(); ++i) {
    const NodeGpuSnapshot& node = *nodes.snapshots[i];
    decision::ClaimNodeVerdict judged = JudgeClaims(claims, demand, node);
    if (judged.verdict.fits) {
      if (std::optional<decision::NodeVerdict> held =
              decision::HeldBack(judged_pod, node, holds, static_cast<int>(judged.verdict.chosen->gpus.size()))) {
        judged.reason = decision::JudgedReasonText(*held, judged_pod, node, holds);
        judged.verdict = *std::move(held);
      }
    }
    if (recording) candidates.Add(node, judged.verdict);
    outcome.verdicts.push_back(judged.verdict);
    if (judged.verdict.fits) {
      ++outcome.fitting;
      if (result.nodes) result.nodes->push_back(nodes.raw[i]); else result.node_names->push_back(node.node);
      continue;
    }
    refused.push_back(node.node);
    if (judged.verdict.refusal == decision::Refusal::kHeldForScaleUp) outcome.held_back = true;
    metrics_.nodes_refused.Inc({std::string(decision::RefusalCode(judged.verdict.refusal))});
    if (log_.should_log(spdlog::level::debug)) {
      server::LogEvent(log_, "filter_node",
                       {{"pod", pod_key}, {"node", node.node},
                        {"verdict", judged.verdict.unresolvable ? "unresolvable" : "fail"}, {"reason", judged.reason}},
                       spdlog::level::debug);
    }
    (judged.verdict.unresolvable ? result.failed_and_unresolvable_nodes : result.failed_nodes)[node.node] =
        std::move(judged.reason);
  }
  metrics_.nodes_refused.Inc({"unknown-topology"}, static_cast<double>(nodes.unresolved.size()));
  metrics_.nodes_refused.Inc({"unknown-node"}, static_cast<double>(nodes.unknown.size()));
  // Refused everywhere: the pod's preference (its claims' GPUs under its own topology ask) reaches the
  // expander through the ledger, as a device-plugin pod's does. No ProvisioningRequest is made for it: the
  // request's pod template would name the pod's own claim.
  std::optional<decision::UnplacedPod> unplaced;
  if (!outcome.any_fits()) {
    for (const auto* failed : {&nodes.unresolved, &nodes.unknown}) {
      for (const auto& [node, reason] : *failed) refused.push_back(node);
    }
    unplaced = decision::UnplacedAfter(args.pod, counted, outcome, std::move(refused));
  }
  if (recording) {
    for (const auto& [name, reason] : nodes.unresolved) candidates.AddUnknownTopology(name);
    RecordCycle(history::FilterCycleRecords(clock_.Now(), {decision::LedgerPodUid(args.pod), pod_key},
                                            counted.request.gpus,
                                            std::move(candidates).Take(), unplaced ? &unplaced->preference : nullptr,
                                            /*capacity_requested=*/false));
  }
  if (unplaced) KeepPreference(std::move(unplaced->preference));
  const size_t passed = result.nodes ? result.nodes->size() : result.node_names->size();
  server::LogEvent(log_, "filter",
                   {{"pod", pod_key},
                    {"claim_gpus", claims.all ? std::string("all") : absl::StrCat(claims.gpus)},
                    {"passed", passed},
                    {"failed", result.failed_nodes.size()},
                    {"unresolvable", result.failed_and_unresolvable_nodes.size()}});
  return result;
}

std::string Extender::BindClaimPod(const codec::ExtenderBindingArgs& args, const PodRef& pod, bool asked_capacity) {
  if (absl::Status bound = kube_.BindPod(args.pod_namespace, args.pod_name, args.pod_uid, args.node, {}); !bound.ok()) {
    // A retry of a bind that landed (kube-scheduler's call timed out after the API server took it) is one.
    if (std::string outcome = RepeatedBindOutcome(args, bound); !outcome.empty()) return outcome;
  }
  Landed(pod, asked_capacity);
  return std::string();
}

}  // namespace topofit::scheduler
