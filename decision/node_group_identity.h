#pragma once

#include <cstdint>

#include "kube/objects.h"
#include "decision/intent.h"

namespace topofit::decision {

// Which existing nodes a scale-up intent brought. CA's gRPC request names a node group by its cloud id
// and shows only a template node; real nodes carry no standard "node group" label. So an intent keeps
// the template's labels that every node of its group carries — the cloud's node-pool label, instance
// type, GPU product — and a node is the intent's capacity when it carries them all and was created after
// the intent was recorded (a node that already existed was not bought for the intent's pods).

// The template's labels that identify its group's nodes: the node-pool and shape labels it has
// (kNodeGroupLabelKeys); a template with none of them gives its labels except the per-node ones
// (hostname). Empty when the template has no labels: such an intent holds no node.
kube::StringMap NodeGroupLabels(const kube::Node& template_node);

// True when a node with these labels, created at `created_seconds` (Unix seconds; 0 = unknown), is
// capacity the intent's scale-up brought.
bool BroughtBy(const Intent& intent, const kube::StringMap& node_labels, int64_t created_seconds);

}  // namespace topofit::decision
