#pragma once

// Which node shapes capacity asked for a pod may have. A ProvisioningRequest's pod template tells
// cluster-autoscaler which nodes can serve the pod, and CA counts GPUs only: with the pod's own
// constraints and the nodes the extender refused excluded, it books another existing node the extender
// also refuses (the request is Provisioned, nothing grows, the pod waits for capacity that never comes;
// openb's paper mode with declared run times, bench/RESULTS.md session 14) or grows a group whose nodes
// the extender refuses. Confining the template to the shapes whose empty node gives the set the pod's
// preference asks for makes CA book and grow only what the extender accepts.

#include <optional>
#include <vector>

#include "decision/capacity_ask.h"
#include "decision/preference.h"
#include "kube/objects.h"

namespace topofit::decision {

// The node-selector term that names a node's shape by its labels: its instance type when it has one,
// else its GPU product and count (GPU Feature Discovery's labels); nullopt when it has neither.
std::optional<kube::NodeSelectorTerm> ShapeTerm(const kube::StringMap& labels);

// Whether two terms ShapeTerm made name the same shape: the same label keys with the same values, in order.
bool SameShapeTerm(const kube::NodeSelectorTerm& a, const kube::NodeSelectorTerm& b);

// The terms (any one may match) confining capacity for `preference` to the shapes of `shapes` whose empty
// node gives a set of its GPUs that meets its min-link and min-bandwidth, one term per shape. Empty — no
// confinement — when every shape gives such a set (nothing to leave out), when none does (nothing to
// confine to), or when one that does has no label to name it by (confining would leave it out).
std::vector<kube::NodeSelectorTerm> ShapeTermsFor(const Preference& preference, const ClusterShapes& shapes);

}  // namespace topofit::decision
