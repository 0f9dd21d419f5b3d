#pragma once

// Where, in a cluster, the extender asks cluster-autoscaler for a gang that no NVLink domain holds now:
// the rooms decision::ChooseGangDomain weighs, read from the cluster's nodes and the node groups' templates
// the expander learned from CA, and the node affinity that confines the request's pods to the chosen
// domain. The replay measures its own world instead (replay/gang_scheduling.h); the choice is the same
// function. Pure.

#include <optional>
#include <string>

#include "decision/capacity_ask.h"
#include "decision/gang_capacity.h"
#include "decision/nvlink_domain.h"
#include "decision/pod_demand.h"
#include "kube/objects.h"

namespace topofit::decision {

struct GangCapacityTarget {
  GangCapacityAsk ask;
  std::string node_group;  // the group whose nodes the request grows
  // ANDed into the request's pods' node affinity: the group's identity labels (node_group_identity.h),
  // and for a domain that has nodes already, its label In [value].
  kube::NodeSelectorTerm term;
};

// For `members` members like `member` (its GPU demand `demand`) of a gang that requires one domain. A
// node group forms domains when its template carries one of `labels` and says how many nodes a domain
// holds (topofit.io/nodes-per-domain); a template the member may not run on (its node selector, required
// affinity, tolerations) or whose topology does not resolve is skipped. Its nodes are those that carry
// its identity labels. Each domain its nodes form is a room: the members its Ready nodes hold on their
// free GPUs (`shapes.nodes`, GPUs reserved for other gangs counted as taken by the caller), and the nodes
// it can still grow (nodes per domain less the nodes it has). A group with no node yet is one new domain
// of nodes-per-domain nodes: a group that is one domain (an NVL72 rack bought as a node pool) is what can
// be asked for whole, since nothing tells CA which domain of a larger group a new node lands in (its
// template names the domain of the node it was copied from). nullopt when no domain can hold the gang.
std::optional<GangCapacityTarget> GangCapacityTargetFor(const kube::Pod& member, const GpuDemand& demand, int members,
                                                        const ClusterShapes& shapes,
                                                        const NvlinkDomainLabels& labels);

}  // namespace topofit::decision
