#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace topofit::sim {

// cluster-autoscaler's stock expanders the replay models (reference/baseline-models.md).
enum class StockExpander { kRandom, kLeastWaste, kMostPods, kLeastNodes, kPrice };

// "least-waste,random" -> the chain; InvalidArgument naming an unknown expander.
absl::StatusOr<std::vector<StockExpander>> ParseExpanderChain(absl::string_view chain);
std::string ExpanderChainName(const std::vector<StockExpander>& chain);

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
};

// baseline (stock everything), extender-only, expander-only, topofit (both) — the ablations the report
// compares — all with the same stock `chain`.
std::vector<Policy> StandardPolicies(const std::vector<StockExpander>& chain);

// The standard policies named in `names` ("baseline,topofit"), in that order; InvalidArgument otherwise.
absl::StatusOr<std::vector<Policy>> SelectPolicies(absl::string_view names, const std::vector<StockExpander>& chain);

}  // namespace topofit::sim
