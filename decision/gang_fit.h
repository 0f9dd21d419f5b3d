#pragma once

// Whether new nodes of a node group can ever host a pod's whole gang at the level the gang requires: CA
// counts pods, not domains, so an option that grows nodes for a gang its domains cannot hold strands every
// GPU it buys. Pure. Docs: docs/gangs.md, "Scale-up for gangs".

#include <optional>
#include <string>

#include "decision/gang.h"
#include "decision/nvlink_domain.h"
#include "decision/pod_demand.h"
#include "kube/objects.h"
#include "topology/topology.h"

namespace topofit::decision {

// Why the group whose template node is `template_node` (topology `topology`) can never host the whole of
// the pod's gang (its count known) at the level the gang requires; nullopt when it can, when the pod is in
// no gang or its gang requires nothing (or says it wrongly: the extender refuses such a pod anyway),
// or when the template does not say how many nodes one of its domains holds (topofit.io/nodes-per-domain:
// then the domain's size is unknown and the option is judged as before). A gang that fits on one new node
// needs no domain.
std::optional<std::string> GangNeverFitsGroup(const kube::Pod& pod, const GpuDemand& member,
                                              const kube::Node& template_node, const topology::Topology& topology,
                                              const NvlinkDomainLabels& labels);

}  // namespace topofit::decision
