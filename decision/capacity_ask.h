#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "decision/capacity_wait.h"
#include "decision/filter.h"
#include "decision/node_snapshot.h"
#include "decision/node_topology.h"
#include "kube/node_templates.h"
#include "decision/pod_demand.h"
#include "decision/preference.h"
#include "kube/objects.h"
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
  // Where that shape was seen, for the refusal's words: "node group <id>" (a template CA offered) or
  // "node <name>" (a node of the cluster, busy or not).
  std::string obtainable_from;
  CapacityWaitPolicy wait;
};

// Whether `demand` could ever ask: it prefers (not requires) a topology and says how long it runs.
bool MayAskForCapacity(const GpuDemand& demand);

// The node shapes capacity grown for a pod could have.
struct ClusterShapes {
  // The cluster's nodes: busy or not, a node of a shape means its group exists.
  std::vector<const NodeGpuSnapshot*> nodes;
  // The node groups' templates cluster-autoscaler offered the expander, by group id (ledger::Ledger::
  // NodeGroups): a group at size zero, often the one with the large NVLink nodes, shows no node. Only those
  // the pod may run on count (its node selector and required affinity, its tolerations); a template
  // whose topology cannot be resolved is skipped.
  kube::NodeTemplates group_templates;
  TopologySource* topologies = nullptr;  // resolves group_templates; needed when there are any
};

// Of a BestOptions call's templates, those the ledger keeps (ledger::Ledger::RecordNodeGroups): the
// groups with GPUs, each reduced to what decisions read of a template (labels, annotations, taints,
// capacity, allocatable) without what CA makes anew on every call (the name, `template-node-for-<id>-
// <random>`, and the kubernetes.io/hostname label set to it), so a group offered again as it was is the
// same template. One function for the expander and the replay.
std::map<std::string, kube::Node> GpuGroupTemplates(const kube::NodeTemplates& templates);
// One template as GpuGroupTemplates keeps it; nullopt for a group without GPUs.
std::optional<kube::Node> GpuGroupTemplate(const kube::Node& template_node);

// The CapacityAsk of `pod` (`demand` is its DemandOf) when it MayAskForCapacity, given the shapes the
// cluster has and can grow and the pod's own ledger preferences (the first refusal); nullopt when no
// shape gives, empty, a set that meets its ask (then no capacity could).
std::optional<CapacityAsk> CapacityAskFor(const kube::Pod& pod, const GpuDemand& demand, const ClusterShapes& shapes,
                                          absl::Time now, const std::vector<Preference>& own_preferences,
                                          const CapacityWaitPolicy& wait);

// Whether the pod, which `fitted` (a fitting FilterNode verdict) would give a poorer set than it prefers
// and for which no capacity is held, asks instead: AskForCapacity.
bool AsksForCapacity(const GpuDemand& demand, const NodeVerdict& fitted, const CapacityAsk& ask);

// The words for a kAskingForCapacity verdict (RefusalText's) and what the pod asks for.
std::string AskingReasonText(const NodeVerdict& verdict, const CapacityAsk& ask);

}  // namespace topofit::decision
