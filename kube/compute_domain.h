#pragma once

// NVIDIA's ComputeDomain (resource.nvidia.com v1beta1 and v1beta2, from the DRA driver for GPUs), reduced to
// what places its pods: the multi-node NVLink (IMEX) domain a distributed workload runs in. The driver makes
// a ResourceClaimTemplate named in spec.channel.resourceClaimTemplate.name; every pod that names it in
// spec.resourceClaims joins the domain. When such a pod's channel claim is prepared, the driver labels its
// node `resource.nvidia.com/computeDomain: <domain uid>` and refuses to prepare another domain's channel
// there, and the domain's daemon on that node lists the node in status.nodes with its NVLink clique.
// codec/compute_domain_json.h decodes it. Docs: docs/gangs.md, "ComputeDomains".

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "kube/objects.h"

namespace topofit::kube {

// The node label the driver sets to the uid of the one ComputeDomain whose channel is prepared there.
inline constexpr absl::string_view kComputeDomainNodeLabel = "resource.nvidia.com/computeDomain";
// v1beta2 dropped spec.numNodes and keeps a converted v1beta1 object's value in this annotation.
inline constexpr absl::string_view kComputeDomainNumNodesAnnotation = "resource.nvidia.com/computedomain-num-nodes";

// status.nodes[]: a node whose daemon joined the domain.
struct ComputeDomainNode {
  std::string name;
  std::string clique_id;  // "<ClusterUUID>.<cliqueId>", the node's nvidia.com/gpu.clique; empty off a fabric
  std::string status;     // "Ready" or "NotReady"
  bool operator==(const ComputeDomainNode&) const = default;
};

struct ComputeDomain {
  ObjectMeta metadata;
  std::string channel_template;  // spec.channel.resourceClaimTemplate.name, in the domain's namespace
  // The intended number of nodes: v1beta1's spec.numNodes, or v1beta2's annotation; nullopt when unset or 0
  // (the driver's default: the workload counts its own workers).
  std::optional<int> num_nodes;
  std::vector<ComputeDomainNode> nodes;
  bool operator==(const ComputeDomain&) const = default;
};

}  // namespace topofit::kube
