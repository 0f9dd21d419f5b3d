#pragma once

#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace topofit::sim {

// cluster-autoscaler's stock expanders the replay models (reference/baseline-models.md).
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

// Which of topofit's components a replayed world runs. The rest of the world is always the stock one:
// kube-scheduler's default profile, the NVIDIA device plugin (when topofit does not bind), and
// cluster-autoscaler with `chain` (ties left at its end are broken at random, as CA does).
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
};

// baseline (stock everything), extender-only, expander-only, topofit (both) — the ablations the report
// compares — all with the same stock `chain`.
std::vector<Policy> StandardPolicies(const std::vector<StockExpander>& chain,
                                     const ExpanderPriorities& priorities = {});

// The standard policies named in `names` ("baseline,topofit"), in that order; InvalidArgument otherwise.
absl::StatusOr<std::vector<Policy>> SelectPolicies(absl::string_view names, const std::vector<StockExpander>& chain,
                                                   const ExpanderPriorities& priorities = {});

}  // namespace topofit::sim
