#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "decision/capacity_wait.h"
#include "decision/compute_domain.h"
#include "kube/node_templates.h"
#include "kube/objects.h"
#include "kube/shared_pods.h"
#include "decision/node_topology.h"
#include "decision/nvlink_domain.h"
#include "decision/preference.h"

namespace topofit::decision {

struct ClaimSource;  // claim_pod_demand.h

// One of cluster-autoscaler's options: grow `node_group_id` by `node_count` nodes for `pods`.
struct GroupOption {
  std::string node_group_id;
  int node_count = 0;
  kube::SharedPods pods;  // the same pending pods recur in many options; they may be one object
};

struct RankInput {
  std::vector<GroupOption> options;
  kube::NodeTemplates templates;                 // node group id -> its template node
  std::vector<Preference> preferences;         // the extender's pending preferences
  std::map<std::string, double> price_per_node_hour;   // node group id -> price (absent: from the template)
  absl::Time now;  // when CA asked: how long a pod that asks for capacity has waited (capacity_ask.h)
  // The claims of pods whose GPUs come from ResourceClaims (claim_pod_demand.h: DemandOnTemplates); null:
  // pods ask for GPUs through nvidia.com/gpu only.
  const ClaimSource* claims = nullptr;
  // Where a pod's ComputeDomain is found (compute_domain.h): its pods are a gang in one NVLink domain, a
  // node each (gang_fit.h). Null: none are read.
  const ComputeDomainSource* compute_domains = nullptr;
};

struct RankPolicy {
  // When every GPU option would strand a GPU pod, answer with no option (CA ≥ 1.32: no scale-up this
  // loop) rather than let CA grow a group the scheduler would refuse. Off: fail open (all options).
  bool veto_when_all_strand = true;
  // The extender's: a pod that says its run time refuses a poorer set of a group while the capacity that
  // gives its ask is worth the boot (capacity_ask.h), so new nodes of that group would strand it.
  CapacityWaitPolicy capacity_wait;
  // The node labels that name an NVLink domain: a gang that requires one domain strands on a group whose
  // domains cannot hold it whole (gang_fit.h).
  NvlinkDomainLabels domain_labels = NvlinkDomainLabels::Default();
};

// How one option fared on its group's template, for the reply, logs and metrics.
struct OptionVerdict {
  std::string node_group_id;
  bool needs_gpus = false;        // some pod of the option requests GPUs
  bool strands = false;           // a GPU pod would not be placed on the new nodes
  std::string reason;             // why it strands, or how it was judged
  int preferences_satisfied = 0;  // option pods with a ledger preference that the new nodes serve
  // Of the placed pods that ask for a topology (min-link / min-bandwidth, binding or preferred), the share
  // whose GPU set meets it, per mille; 1000 when none asks.
  int64_t quality_per_mille = 0;
  int provisioned_gpus = 0;       // GPUs of the new nodes (also for an option without GPU pods)
  int idle_gpus = 0;              // GPUs of the new nodes no pod of the option takes
  // The GPUs the option's placed pods use, each times the useful share of the stretch its set is expected
  // to cause against the best set of its size on any group of the call (slowdown.h: UsefulShare, Stretch,
  // AssumedCommFraction).
  double useful_gpus = 0;
  int placed_pods = 0;            // GPU pods of the option the new nodes take
  // GPU pods the new nodes would refuse (namespace/name), when the option was simulated.
  std::vector<std::string> unplaced_pods;
  // Placed pods that ask for a topology and whose set on the new nodes meets it (their ledger uids).
  std::vector<std::string> topology_met;
  double price = 0;               // node_count x price per node-hour (0 when unknown)
  // For an option without GPU pods: what its pods are worth per hour at the price expander's rates
  // (price_ratio.h), which WithoutGpuPods weighs its price against.
  double pods_worth = 0;
};

struct Ranking {
  // Node group ids to return to CA, best first: the GPU options tied for best, then the options without
  // GPU pods that buy the fewest idle GPUs (passed through). Empty only as a deliberate veto.
  std::vector<std::string> chosen;
  std::vector<OptionVerdict> verdicts;  // one per option, in the input's order
  bool veto = false;
  // Whether costs were prices (every viable option's price known) or, failing that, GPUs.
  bool by_price = false;
};

// The template annotation giving a group's price when the config has none, e.g. "32.77".
inline constexpr char kPriceAnnotation[] = "topofit.io/price-per-node-hour";

// Judges each option by placing its pods on `node_count` fresh nodes of the group's template with the
// extender's own filter rules (decision::FilterNode, and the asking rule for a pod that says its run time
// and prefers a topology some offered group gives: same code, so a group the expander picks is one the
// scheduler accepts), drops options that would strand a GPU pod, and ranks the rest by, in order: ledger
// preferences satisfied (pods refused for a required topology: topology first for them), the lowest cost
// per useful GPU-hour (price over the GPUs the pods use, each discounted for its set's expected slowdown,
// its bill and its delay: price weighed against topology for pods that only prefer one), the most pods
// placed. Options without GPU pods are passed through, except that GPUs bought for pods that use none
// idle: when every such option buys GPUs only the cheapest goes on, and when some buy none only those do.
// Pure: no I/O, no clock.
// Within a call, a pod object shared by several options has its demand read once, and each distinct
// (template shape, pod demand, GPUs already taken) case goes through the filter once. Templates' topologies
// come from `topologies`. `stop`, when given, is asked between options and every few thousand placements
// tried within one; once it answers true the ranking stops and is incomplete: the caller must discard it
// (the expander's call deadline).
Ranking RankOptions(const RankInput& input, TopologySource& topologies, const RankPolicy& policy = {},
                    const std::function<bool()>& stop = {});

}  // namespace topofit::decision

namespace topofit::decision {

// The first of RankOptions' criteria on which `loser` ranks behind `winner`, with costs priced or counted
// in GPUs as the ranking did (Ranking::by_price); kNone when it does not (a tie).
enum class RankCriterion : uint8_t { kNone, kPreferences, kCostPerUsefulGpu, kPodsPlaced };
RankCriterion LostOn(const OptionVerdict& loser, const OptionVerdict& winner, bool by_price);

}  // namespace topofit::decision
