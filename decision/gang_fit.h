#pragma once

// Whether new nodes of a node group can ever host a pod's whole gang at the level the gang requires: CA
// counts pods, not domains, so an option that grows nodes for a gang its domains cannot hold strands every
// GPU it buys. Pure. Docs: docs/gangs.md, "Scale-up for gangs".

#include <optional>
#include <string>

#include "decision/compute_domain.h"
#include "decision/gang.h"
#include "decision/nvlink_domain.h"
#include "decision/pod_demand.h"
#include "kube/objects.h"
#include "topology/topology.h"

namespace topofit::decision {

// A gang whose count is known and which requires a level: what the expander judges groups against.
struct RequiredGang {
  Gang gang;
  GangLevel level = GangLevel::kDomain;
  int most_per_node = 0;  // GangAsk's: 1 for a ComputeDomain's pods, else 0 (no limit)
};

// The pod's gang when it has a known count and requires a level it understands; nullopt otherwise (no
// gang, nothing required, or said wrongly: the extender refuses such a pod anyway). `compute_domain`: the
// pod's ComputeDomain (compute_domain.h), whose pods are a gang in one NVLink domain a node each; null: none.
std::optional<RequiredGang> RequiredGangOf(const kube::Pod& pod, const NvlinkDomainLabels& labels,
                                           const kube::ComputeDomain* compute_domain = nullptr);

// Why the group whose template node is `template_node` (topology `topology`) can never host the whole of
// `gang` at its required level, each member asking `member`; nullopt when it can, or when the template
// does not say how many nodes one of its domains holds (topofit.io/nodes-per-domain: then the domain's
// size is unknown and the option is judged as before). A gang that fits on one new node needs no domain.
std::optional<std::string> GangNeverFitsGroup(const RequiredGang& gang, const GpuDemand& member,
                                              const kube::Node& template_node, const topology::Topology& topology,
                                              const NvlinkDomainLabels& labels);

}  // namespace topofit::decision
