#pragma once

#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "decision/capacity_wait.h"
#include "decision/headroom_plan.h"

namespace topofit::sim {

// cluster-autoscaler's stock expanders the replay models (docs/bench.md, "The models").
enum class StockExpander { kRandom, kLeastWaste, kMostPods, kLeastNodes, kPrice, kPriority };

// "least-waste,random" -> the chain; InvalidArgument naming an unknown expander.
absl::StatusOr<std::vector<StockExpander>> ParseExpanderChain(absl::string_view chain);
std::string ExpanderChainName(const std::vector<StockExpander>& chain);

// The `priority` expander's configuration: priority -> regexes of node group names, as CA reads it from the
// ConfigMap `cluster-autoscaler-priority-expander`, key `priorities`.
struct ExpanderPriorities {
  std::map<int, std::vector<std::regex>> by_priority;

  // The highest priority with a regex found anywhere in `group` (unanchored, as upstream's
  // FindStringIndex); nullopt when none matches.
  std::optional<int> Highest(absl::string_view group) const;
};

// The text of the ConfigMap's `priorities` key ("10:\n  - .*g5.*\n50:\n  - p4d.*"): a YAML map of integer
// to a list of regexes. A whole ConfigMap (`kubectl get configmap -o yaml`) is accepted too and its
// data.priorities read. InvalidArgument for empty or malformed YAML, a non-integer or repeated priority,
// or a regex that does not compile (ECMAScript syntax; CA uses Go's RE2, which agrees on the usual
// patterns: `.*`, classes, alternation, escapes).
absl::StatusOr<ExpanderPriorities> ParseExpanderPriorities(absl::string_view yaml);

// How kube-scheduler's NodeResourcesFit plugin scores a node (its scoringStrategy).
enum class ResourceScoring {
  // The default profile: LeastAllocated over cpu and memory (weight 1 each); GPUs are filtered, never scored.
  kLeastAllocated,
  // The documented bin-packing set-up (kubernetes.io "Resource Bin Packing"): MostAllocated over cpu
  // (weight 1), memory (1) and nvidia.com/gpu (3, the weight the documentation's example gives extended
  // resources); a pod that requests no GPUs is not scored on them.
  kMostAllocatedWithGpus,
};

// Who picks the GPU ids of a pod topofit's extender bound, on its node (issue 11).
enum class GpuIds {
  // topofit's node agent is the device plugin: the kubelet gets exactly the set the extender chose.
  kAgent,
  // NVIDIA's device plugin picks, as for any pod (go-gpuallocator's best effort, a random free GPU for one);
  // the extender's GPU state learns the real ids through the watch, modelled as at once.
  kDevicePlugin,
};

// How the replayed pods ask for GPUs, in every world of one replay.
enum class GpuApi {
  // nvidia.com/gpu, through the device plugin (GpuIds says who picks a topofit-bound pod's ids).
  kDevicePlugin,
  // ResourceClaims of NVIDIA's DRA driver (docs/dra.md): kube-scheduler's DRA allocator picks every pod's
  // devices on its node, first fit (replay/dra_allocation.h). topofit's extender judges and scores claim
  // pods as the real one does today, and no more (UseDra).
  kDra,
};

// Warm capacity a world keeps through cluster-autoscaler's CapacityBuffers (docs/headroom.md): CA adds the
// buffers' fake pods to the pods it scales up for and keeps the capacity they fit on from scale-down; the
// scheduler never sees them, so the first real pod takes the capacity and the buffer is grown again.
struct Headroom {
  enum class Sizing {
    kNone,
    // A buffer of `replicas` pods for each shape of the workload's bursty pods (PodSpec::kind "inference"),
    // as an operator sizes buffers by hand.
    kStatic,
    // topofit's planner (decision::HeadroomPlanner) sizes a buffer per shape of GPU pods from the pods it saw.
    kAdaptive,
  };
  Sizing sizing = Sizing::kNone;
  int replicas = 0;
  decision::HeadroomConfig adaptive;
  bool fill_rate_named = false;  // "buffer:adaptive:F" set adaptive.quantile itself
  // "" for none, "buffer:2", "buffer:adaptive": the suffix a policy's name takes.
  std::string Name() const;
};

// "none", "buffer:N" (N > 0), "buffer:adaptive" or "buffer:adaptive:F" (a fill rate F in (0, 1]);
// InvalidArgument otherwise.
absl::StatusOr<Headroom> ParseHeadroom(absl::string_view text);

// Which of topofit's components a replayed world runs, and how its stock components are set up. The rest
// of the world is always the stock one: kube-scheduler, the NVIDIA device plugin (when topofit does not
// bind), and cluster-autoscaler with `chain` (ties left at its end are broken at random, as CA does).
struct Policy {
  std::string name;
  // The secondary scheduler calls topofit's filter/prioritize/bind (the extender's decision functions),
  // records ledger preferences, and topofit creates ProvisioningRequests for pods refused for topology.
  bool topofit_extender = false;
  // topofit's RankOptions runs first in CA's expander chain (--expander=grpc,<chain>).
  bool topofit_expander = false;
  std::vector<StockExpander> chain;
  // What `priority` in `chain` reads; empty, it filters nothing (as CA when no group matches).
  ExpanderPriorities priorities;
  // The operator's tuning (the `tuned` baselines): pods that require a topology carry the node affinity
  // operator_tuning.h derives, and kube-scheduler scores with `scoring`.
  bool operator_affinity = false;
  // And pods that only prefer a topology carry the same groups as preferred node affinity, which
  // kube-scheduler's NodeAffinity plugin scores (the tuned baselines; CA's simulation ignores it).
  bool operator_preferred_affinity = false;
  ResourceScoring scoring = ResourceScoring::kLeastAllocated;
  // The tuned operator's gang scheduler (KAI, or Kueue's topology-aware admission): a gang's pods are placed
  // all at once on the Ready nodes, inside the level the gang asks for, or not at all (decision::PlaceGang,
  // the function topofit's extender reserves with); cluster-autoscaler still scales for them pod by pod.
  bool gang_scheduler = false;
  // Whether gangs are placed whole: by topofit's extender (its reservations, scheduler/extender_gangs.cc,
  // taken as instantaneous: a gang's members arrive together) or by the operator's gang scheduler.
  bool places_gangs_whole() const {
    return (topofit_extender && gpu_api == GpuApi::kDevicePlugin) || gang_scheduler;
  }
  // With topofit_extender: who gives the bound pod its GPU ids on the node.
  GpuIds gpu_ids = GpuIds::kAgent;
  GpuApi gpu_api = GpuApi::kDevicePlugin;
  // With topofit_extender, its mechanisms, each on as `topofit extender` runs by default; the ablations
  // (AblationPolicies) turn one off at a time:
  // how long pods preferring a topology wait for the capacity scaled up for them (decision/capacity_wait.h;
  // max_wait 0: never),
  decision::CapacityWaitPolicy capacity_wait = {};
  // new capacity held for the pods it was grown for (decision/capacity_hold.h; off: nothing held, so nobody
  // waits either),
  bool capacity_holds = true;
  // the extender's prioritize score (topology quality, packing, cohesion; off: weight 0),
  bool topology_score = true;
  // within that score, the sets of the world's CapacityBuffers (headroom) kept whole (decision/warm_capacity.h;
  // off: scored as if no buffer were there, as `topofit extender --no-keep-buffered-sets`),
  bool keep_buffered_sets = true;
  // ProvisioningRequests for pods refused for topology (off: they wait for capacity CA grows on its own),
  bool provisioning_requests = true;
  // pods decision::KeepFromScaleDownDrain names keep CA's scale-down from draining their node (off: CA's
  // scale-down may evict them).
  bool drain_guard = true;
  Headroom headroom = {};
};

// The policy's world with pods asking for GPUs through ResourceClaims. topofit's extender runs for claim
// pods only what the real one does (scheduler/extender_claims.cc): filter and prioritize, holding new
// capacity for the pods it was grown for, and the preference of a pod refused everywhere. It creates no
// ProvisioningRequest for them, does not make them wait for capacity or ask for it, guards no drain and
// places no gang whole; its webhook writes no affinity for them (it reads nvidia.com/gpu). Its expander reads their claims, as `topofit expander --dra` does from its
// claim watch (decision::DemandOnTemplates).
Policy UseDra(Policy policy);

// The stock world as shipped: no topofit, default scoring, no affinity an operator would add. "stock".
Policy StockPolicy(const std::vector<StockExpander>& chain, const ExpanderPriorities& priorities = {});
// The stock world as an operator tunes it for GPUs: operator affinity and MostAllocated with GPUs. `name`
// says which chain it runs when several are compared ("tuned", "tuned:price").
Policy TunedPolicy(std::string name, const std::vector<StockExpander>& chain, const ExpanderPriorities& priorities = {});

// stock, tuned, extender-only, expander-only, topofit (both) — the baselines and the ablations the
// report compares — all with the same stock `chain`.
std::vector<Policy> StandardPolicies(const std::vector<StockExpander>& chain,
                                     const ExpanderPriorities& priorities = {});

// The expander chains the `sweep` baseline runs the tuned world with: random, least-waste, price, and
// priority,least-waste (reading the priorities an operator writes for the NVLink groups).
std::vector<std::vector<StockExpander>> SweepChains();

// What `topofit bench` compares: `baselines` from stock, tuned (with `chain`) and sweep (tuned with each
// of SweepChains, named "tuned:<chain>", the one equal to `chain` plain "tuned"); then `policies` from
// extender-only, expander-only, topofit (with `chain`), and topofit's ablations, each one mechanism off:
// topofit-no-wait, topofit-no-holds, topofit-no-score, topofit-no-requests, topofit-no-guard ("ablations": all
// five); and topofit-affinity, topofit whose pods that require a topology carry the tuned operator's node
// affinity, as a mutating admission webhook would write it, so that CA's simulation sees the requirement
// (not part of topofit: an owner's choice the bench shows both sides of). Duplicates are kept once. `priorities` is what
// every `priority` expander reads. InvalidArgument for an unknown name or when nothing is selected.
// `headroom` (a comma list of ParseHeadroom's) gives every selected policy each headroom but "none" as a policy of its
// own, named "<policy>+<headroom>"; "none" keeps the policy as it is.
struct PolicySelection {
  std::string baselines = "stock,tuned";
  std::string policies = "extender-only,expander-only,topofit";
  std::string headroom = "none";
  std::vector<StockExpander> chain = {StockExpander::kLeastWaste};
};
absl::StatusOr<std::vector<Policy>> SelectPolicies(const PolicySelection& selection,
                                                   const ExpanderPriorities& priorities = {});

// Whether any selected policy's chain names `priority`.
bool AnyUsesPriority(const std::vector<Policy>& policies);

}  // namespace topofit::sim
