#pragma once

// A pod's required node affinity rewritten in the API's JSON, keeping every field of the pod's own terms as
// sent (those topofit's decoder does not read too), for the objects topofit writes from a pod: the
// ProvisioningRequest's pod template (kubeclient/provisioning.h) and the admission webhook's patch
// (webhook/admission.h).

#include <vector>

#include <nlohmann/json.hpp>

#include "kube/objects.h"

namespace topofit::codec {

// The nodeSelectorTerms of a pod whose own are `own` (spec.affinity.nodeAffinity.
// requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms as sent), confined to `shapes` (ORed
// terms naming node shapes, decision::ShapeTerm): each own term ANDed with each shape's requirements, or,
// when it has no term (absent, null or empty), the shapes alone. Shapes name nodes by In and NotIn only;
// requirements with other operators are not written.
nlohmann::json ConfinedTerms(const nlohmann::json& own, const std::vector<kube::NodeSelectorTerm>& shapes);

}  // namespace topofit::codec
