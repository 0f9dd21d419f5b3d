#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

#include "kube/objects.h"
#include "decision/intent.h"

namespace topofit::decision {

// Which existing nodes a scale-up intent brought. CA's gRPC request names a node group by its cloud id
// and shows only a template node; real nodes carry no standard "node group" label. So an intent keeps
// the template's labels that every node of its group carries — the cloud's node-pool label, instance
// type, GPU product — and a node is the intent's capacity when it carries them all and was created after
// the intent was recorded (a node that already existed was not bought for the intent's pods).

// The labels cloud providers' node groups put on every node of the group (the node-pool labels, most
// specific first), then the instance-type labels, which name a group's shape where no node-pool label does.
inline constexpr std::array<absl::string_view, 7> kNodeGroupNameLabelKeys = {
    "eks.amazonaws.com/nodegroup",     // EKS managed node groups
    "alpha.eksctl.io/nodegroup-name",  // eksctl
    "cloud.google.com/gke-nodepool",   // GKE
    "kubernetes.azure.com/agentpool",  // AKS
    "agentpool",                       // AKS, older clusters
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
};

// The template's labels that identify its group's nodes: the node-pool and shape labels it has
// (kNodeGroupNameLabelKeys and the GPU product and count); a template with none of them gives its labels
// except the per-node ones (hostname). Empty when the template has no labels: such an intent holds no node.
kube::StringMap NodeGroupLabels(const kube::Node& template_node);

// The name of a node's group as its labels tell it: the value of the first of kNodeGroupNameLabelKeys it
// carries, "" when none.
std::string NodeGroupName(const kube::StringMap& labels);

// True when a node with these labels, created at `created_seconds` (Unix seconds; 0 = unknown), is
// capacity the intent's scale-up brought.
bool BroughtBy(const Intent& intent, const kube::StringMap& node_labels, int64_t created_seconds);

}  // namespace topofit::decision
