#pragma once

#include <string>

#include "kube/objects.h"
#include "kube/topofit_annotations.h"

namespace topofit::decision {

// The uid the ledger knows a pod by. For the pods cluster-autoscaler makes from a ProvisioningRequest's
// PodTemplate (uid "namespace/name", never a real pod) it is the pending pod the template was written
// for (kube::kStandsForPodUidAnnotation); for every other pod, its own uid.
inline const std::string& LedgerPodUid(const kube::Pod& pod) {
  auto it = pod.metadata.annotations.find(kube::kStandsForPodUidAnnotation);
  return it != pod.metadata.annotations.end() && !it->second.empty() ? it->second : pod.metadata.uid;
}

}  // namespace topofit::decision
