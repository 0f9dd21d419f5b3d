#include "decision/preference.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace topofit::decision {

Preference PreferenceFor(const kube::Pod& pod, const GpuDemand& demand, std::vector<std::string> refused_nodes,
                         PreferredSet set) {
  Preference preference;
  preference.pod_uid = pod.metadata.uid;
  preference.pod_key = absl::StrCat(pod.metadata.namespace_name, "/", pod.metadata.name);
  const topology::AllocationRequest request = set == PreferredSet::kAsked ? demand.request : EnforcedRequest(demand);
  preference.gpus = request.gpus;
  preference.min_link = request.min_link;
  preference.min_bandwidth_mbps = request.min_bandwidth_mbps;
  preference.node_selector = pod.spec.node_selector;
  preference.required_node_affinity = pod.spec.required_node_affinity;
  preference.refused_nodes = std::move(refused_nodes);
  return preference;
}

}  // namespace topofit::decision
