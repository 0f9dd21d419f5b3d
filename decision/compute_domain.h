#pragma once

// What a ComputeDomain (kube/compute_domain.h: NVIDIA's multi-node NVLink domain for one workload) asks of
// its pods' placement. Its pods are one gang (gang.h) that must share one NVLink domain, at most one pod
// per node (the driver prepares one channel per node); a node whose channel another ComputeDomain holds
// cannot take them (the driver refuses to prepare it there); and once the domain runs in an NVLink clique,
// its next pods join that clique. Pure. Docs: docs/gangs.md, "ComputeDomains".

#include <functional>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "decision/gang.h"
#include "kube/compute_domain.h"
#include "kube/objects.h"

namespace topofit::decision {

// The ComputeDomain whose channel template is `channel_template` in namespace `namespace_name`; nullopt when
// none is known.
using ComputeDomainLookup =
    absl::FunctionRef<std::optional<kube::ComputeDomain>(absl::string_view namespace_name, absl::string_view channel_template)>;

// A lookup that outlives a call: a watch's domains, held by a server.
using ComputeDomainSource =
    std::function<std::optional<kube::ComputeDomain>(absl::string_view namespace_name, absl::string_view channel_template)>;

// The ComputeDomain the pod joins: the one whose channel template an entry of spec.resourceClaims names
// (resourceClaimTemplateName), in the pod's namespace; nullopt when it names none. InvalidArgument when it
// names the channels of two domains: a node holds one domain's channel, so such a pod never starts.
absl::StatusOr<std::optional<kube::ComputeDomain>> ComputeDomainOf(const kube::Pod& pod, ComputeDomainLookup lookup);

// The topology a member of `domain` must keep: the pod's own (GangTopologyOf) when it requires a level
// already, else one NVLink domain, the domain's whole point, as required; a preferred level is kept.
GangTopology ComputeDomainTopology(std::optional<GangTopology> wanted, const kube::ComputeDomain& domain);

// Why a node with `node_labels` cannot take a pod of `domain`, for the filter's refusal; nullopt when it
// can. A node is refused when the driver's label says another ComputeDomain's channel is prepared there,
// or, while it carries no such label, when `bound_for` (the uid of the domain a pod was just bound there
// for, whose channel the driver has not prepared yet; empty when none) is another domain's; and when the
// domain already runs on nodes of NVLink cliques (status.nodes) and the node's nvidia.com/gpu.clique is
// none of them: GPU memory is shared over NVLink within a clique only.
std::optional<std::string> ComputeDomainRefusal(const kube::ComputeDomain& domain, const kube::StringMap& node_labels,
                                                absl::string_view bound_for = {});

// Why the new nodes of a node group whose template carries `template_labels` can never take a pod of
// `domain`, for the expander: the domain runs in NVLink cliques and the template's clique is none of them
// (a template without one forms a clique of its own). nullopt when they can. The template's
// resource.nvidia.com/computeDomain label (copied from a running node) is not read: a new node holds no
// channel yet.
std::optional<std::string> ComputeDomainNeverOnGroup(const kube::ComputeDomain& domain,
                                                     const kube::StringMap& template_labels);

}  // namespace topofit::decision
