#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "decision/pod_demand.h"
#include "kube/objects.h"
#include "topology/link.h"

namespace topofit::decision {

// Capacity a pending GPU pod needs that no existing node can give it at its required topology: the
// extender records it in the ledger, the expander reads it to pick the node group that serves it
// (docs/kubeclient.md, "The ledger in the API").
struct Preference {
  std::string pod_uid;
  std::string pod_key;  // namespace/name
  int gpus = 0;
  topology::LinkClass min_link = topology::LinkClass::kSys;
  int64_t min_bandwidth_mbps = 0;
  // The pod's product constraints as it states them: which node groups' templates may serve it.
  kube::StringMap node_selector;
  std::optional<kube::NodeSelector> required_node_affinity;
  std::vector<std::string> refused_nodes;  // existing nodes the extender refused, and why it did
  absl::Time first_seen;
  absl::Time last_seen;
};

// What a preference asks of the new capacity's GPU set: the pod's enforced request (it could be served on
// no offered node), or the whole of its ask, preferred constraints too (it asks for capacity that gives
// them: capacity_ask.h).
enum class PreferredSet : uint8_t { kEnforced, kAsked };

// The preference of a GPU pod that no offered node could serve: what capacity it needs (GPU count, min
// link and bandwidth as `set` says, the node selector and affinity that constrain its product) and which
// nodes refused it. Times are left for the ledger to set. One function for the extender and the bench's
// replay of it.
Preference PreferenceFor(const kube::Pod& pod, const GpuDemand& demand, std::vector<std::string> refused_nodes,
                         PreferredSet set = PreferredSet::kEnforced);

}  // namespace topofit::decision
