#pragma once

// What topofit's mutating admission webhook does to a pod being created, as a pure function: for a pod that
// requires a GPU topology (topofit.io/topology-policy: required), the required node affinity confining it
// to the node groups whose shape can give that topology (decision::TopologyShapeTerms), so that
// cluster-autoscaler's simulation, which never calls the extender, grows only those groups for it.
// docs/webhook.md.

#include <map>
#include <string>

#include "codec/admission_json.h"
#include "decision/node_topology.h"
#include "kube/node_templates.h"
#include "kube/objects.h"

namespace topofit::webhook {

// What became of one review: the metric's `outcome` label and the log's.
enum class Outcome {
  kPatched,         // the affinity written
  kNotPodCreate,    // not a core/v1 Pod being created: the configuration's rules should not send it
  kNotRequired,     // no GPUs, or a topology only preferred: nothing for CA to learn
  kAlreadyWritten,  // kTopologyAffinityAnnotation present: a reinvocation
  kNoTemplates,     // no node group template known yet (the expander has not published any)
  kNoGroup,         // no known group can give the topology on an empty node
  kUnreadable,      // the pod or its topofit.io annotations do not decode
};
const char* OutcomeName(Outcome outcome);

struct Admission {
  codec::AdmissionResponse response;  // always allowed; a patch only for kPatched
  Outcome outcome = Outcome::kNotPodCreate;
};

// The response to `request`, given the node group templates known (by group id, as the ledger keeps them:
// kubeclient::NodeGroupsConfigMap::Live) and where their topologies come from. The patch adds the terms
// with RFC 6902 `add` operations at the first level of spec.affinity.nodeAffinity.
// requiredDuringSchedulingIgnoredDuringExecution that the pod lacks (or replaces its nodeSelectorTerms,
// each own term ANDed with each group's, every field of them kept), and kTopologyAffinityAnnotation.
// Pods that are not patched for a reason their author can act on get a warning.
Admission Admit(const codec::AdmissionRequest& request, const kube::NodeTemplates& templates,
                decision::TopologySource& topologies);

}  // namespace topofit::webhook
