#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "decision/capacity_wait.h"
#include "decision/filter.h"
#include "decision/node_snapshot.h"
#include "decision/pod_demand.h"
#include "decision/preference.h"
#include "topology/topology.h"

namespace topofit::decision {

// What one filter of one pod needs to decide whether the pod asks for capacity that gives the topology it
// prefers rather than take a poorer set now (capacity_wait.h, AskForCapacity). Built by the extender (and
// the replay) per request, only for a pod that could ask.
struct CapacityAsk {
  absl::Time now;
  absl::Time first_refused;  // when the pod was first refused (its ledger preference's first_seen), else now
  // The best set of the pod's size that meets its ask on an empty node of a shape the cluster has: what
  // capacity grown for it can give.
  int64_t obtainable_mbps = 0;
  CapacityWaitPolicy wait;
};

// Whether `demand` could ever ask: it prefers (not requires) a topology and says how long it runs.
bool MayAskForCapacity(const GpuDemand& demand);

// The CapacityAsk of a pod that MayAskForCapacity, given the cluster's nodes (their shapes: busy or not,
// a node of a shape means its group exists) and the pod's own ledger preferences (the first refusal);
// nullopt when no shape gives, empty, a set that meets its ask (then no capacity could).
std::optional<CapacityAsk> CapacityAskFor(const GpuDemand& demand, const std::vector<const NodeGpuSnapshot*>& nodes,
                                          absl::Time now, const std::vector<Preference>& own_preferences,
                                          const CapacityWaitPolicy& wait);

// Whether the pod, which `fitted` (a fitting FilterNode verdict) would give a poorer set than it prefers
// and for which no capacity is held, asks instead: AskForCapacity.
bool AsksForCapacity(const GpuDemand& demand, const NodeVerdict& fitted, const CapacityAsk& ask);

// The words for a kAskingForCapacity verdict.
std::string AskingReasonText(const NodeVerdict& verdict, const CapacityAsk& ask);

}  // namespace topofit::decision
