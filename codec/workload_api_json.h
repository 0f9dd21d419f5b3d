#pragma once

// The Workload API objects that hold a gang's pod count (decision/gang.h: the Workload API keeps
// gang.minCount there, not on the pod). Kubernetes 1.36 (scheduling.k8s.io/v1alpha2): the pod names a
// PodGroup in spec.schedulingGroup.podGroupName, and the PodGroup says spec.schedulingPolicy.gang.minCount
// (or `basic`). Kubernetes 1.35 (v1alpha1): the pod's spec.workloadRef names a Workload and one of its
// spec.podGroups[] by name, whose policy.gang.minCount counts it.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "kube/objects.h"

namespace topofit::codec {

// The object holding the pod's gang count: its PodGroup when it names one, else its Workload.
struct WorkloadApiObject {
  std::string group_version;  // "scheduling.k8s.io/v1alpha2"
  std::string resource;       // "podgroups" or "workloads"
  std::string namespace_name;
  std::string name;           // as the pod wrote it: escape it into a path
};
// nullopt when the pod names neither.
std::optional<WorkloadApiObject> WorkloadApiObjectOf(const kube::Pod& pod);

// gang.minCount of the pod's group in `object` (the object WorkloadApiPathOf names, as the API server
// returns it); nullopt when the group's policy is `basic` (its pods place one by one). NotFound when a
// Workload lists no group of the pod's name; InvalidArgument when the policy is neither, or the count is
// not a whole number from 1 to 100000.
absl::StatusOr<std::optional<int>> GangMinCountIn(const nlohmann::json& object, const kube::Pod& pod);

}  // namespace topofit::codec
