#pragma once

#include "kube/objects.h"

namespace topofit::kube {

// The NodeAffinity filter's question: do the pod's spec.nodeSelector (every label equal) AND its
// required node affinity (terms ORed, requirements within a term ANDed) admit `node`? Upstream:
// k8s.io/component-helpers/scheduling/corev1/nodeaffinity (GetRequiredNodeAffinity(pod).Match(node)).
//
// As upstream: a term with neither matchExpressions nor matchFields matches nothing, and so does a
// required affinity without any other term; a malformed requirement (unknown operator, In/NotIn without
// values, Exists/DoesNotExist with values, Gt/Lt without exactly one integer) makes its whole term match
// nothing; NotIn and DoesNotExist hold on a node without the label; Gt/Lt compare base-10 int64 values
// and fail on a label that is not one; matchFields supports only In/NotIn with exactly one value, on
// metadata.name, and is skipped for a node without a name.
bool MatchesNodeSelector(const Pod& pod, const Node& node);

// Whether any of `terms` (ORed, as a NodeSelector's) admits `node`, by the rules above.
bool MatchesAnyTerm(const std::vector<NodeSelectorTerm>& terms, const Node& node);

// The TaintToleration filter's question: the first of the node's NoSchedule / NoExecute taints that no
// toleration of the pod tolerates, or nullptr. PreferNoSchedule (and unknown effects) never block.
// Upstream: FindMatchingUntoleratedTaint with DoNotScheduleTaintsFilterFunc, Toleration.ToleratesTaint.
const Taint* FindUntoleratedTaint(const Pod& pod, const Node& node);

inline bool ToleratesTaints(const Pod& pod, const Node& node) { return FindUntoleratedTaint(pod, node) == nullptr; }

// Toleration.ToleratesTaint: the effect matches (or the toleration's is empty), the key matches (or the
// toleration's is empty), and the operator holds: Equal (or empty) compares values, Exists takes any.
bool ToleratesTaint(const Toleration& toleration, const Taint& taint);

}  // namespace topofit::kube
