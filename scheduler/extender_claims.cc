// The extender's filter and prioritize for pods whose GPUs come from ResourceClaims (docs/dra.md): the
// claims' demand (decision/claim_demand.h) judged on each node's GPUs as its slices publish them
// (decision/claim_fit.h), inside the one filter cycle of extender.cc. kube-scheduler's DRA plugin allocates the
// devices and the claim watch then counts them, so bind takes no GPU for such a pod: it only binds.

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

decision::PodFilterOutcome Extender::FilterClaims(const decision::ClaimGpuDemand& claims, const GpuDemand& demand,
                                                 const decision::JudgedPod& pod,
                                                 const std::vector<const NodeGpuSnapshot*>& nodes,
                                                 const decision::CapacityHolds& holds,
                                                 std::vector<std::string>& reasons) const {
  decision::PodFilterOutcome outcome;
  outcome.verdicts.reserve(nodes.size());
  reasons.assign(nodes.size(), std::string());
  // Capacity grown for pods is counted for claim pods as for device-plugin pods (capacity_hold.h), by the
  // GPUs the claims take on each node (all of a node's, for allocationMode All).
  GpuDemand here = decision::CountedDemand(demand, claims);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeGpuSnapshot& node = *nodes[i];
    decision::ClaimNodeVerdict judged = JudgeClaims(claims, demand, node);
    if (judged.verdict.fits) {
      here.request.gpus = static_cast<int>(judged.verdict.chosen->gpus.size());
      decision::NodeVerdict counted = decision::HoldsAndAskOn(here, pod, node, holds, judged.verdict);
      if (!counted.fits) {
        judged.reason = decision::JudgedReasonText(counted, pod, node, holds);
        judged.verdict = std::move(counted);
      }
    }
    if (!judged.verdict.fits) reasons[i] = std::move(judged.reason);
    outcome.Add(std::move(judged.verdict));
  }
  return outcome;
}

bool Extender::GangPlacesClaims(const decision::ClaimGpuDemand& claims, const kube::ComputeDomain* domain) {
  if (domain != nullptr) return true;  // a node each
  return !claims.all && claims.selectors.empty() && claims.match_attributes.empty();
}

std::string Extender::BindClaimPod(const codec::ExtenderBindingArgs& args, const PodRef& pod, const kube::Pod& stored,
                                   bool asked_capacity, bool says_safe_to_evict) {
  if (absl::Status bound = kube_.BindPod(args.pod_namespace, args.pod_name, args.pod_uid, args.node, {}); !bound.ok()) {
    // A retry of a bind that landed (kube-scheduler's call timed out after the API server took it) is one.
    if (std::string outcome = RepeatedBindOutcome(args, bound); !outcome.empty()) return outcome;
  }
  if (drain_guard_ != nullptr && dra_ != nullptr && !says_safe_to_evict) {
    absl::StatusOr<GpuDemand> ask = decision::DemandOf(stored);
    std::vector<std::string> holders;
    for (const kube::PodResourceClaim& entry : stored.spec.resource_claims) {
      const std::optional<std::string> name = decision::ClaimNameOf(stored, entry);
      if (!name) continue;
      if (std::optional<kube::ResourceClaim> claim = dra_->Claim(stored.metadata.namespace_name, *name)) {
        holders.push_back(ClaimHolderUid(claim->metadata.uid));
      }
    }
    // Only a pod that asks for a topology can lose one to a drain (decision::KeepFromScaleDownDrain, which
    // judges it again once its number of GPUs is known).
    if (ask.ok() && (ask->request.min_link != topology::LinkClass::kSys || ask->request.min_bandwidth_mbps > 0) &&
        !holders.empty()) {
      drain_guard_->TrackClaims(pod, args.node, *ask, std::move(holders));
    }
  }
  Landed(pod, asked_capacity);
  return std::string();
}

}  // namespace topofit::scheduler
