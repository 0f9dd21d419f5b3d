#include "codec/workload_api_json.h"

#include "absl/strings/str_cat.h"
#include "decision/annotation_value.h"

namespace topofit::codec {
namespace {

// policy.gang.minCount, or nullopt for policy.basic; `where` names the policy in errors.
absl::StatusOr<std::optional<int>> CountOfPolicy(const nlohmann::json& policy, const std::string& where) {
  if (policy.is_object() && policy.contains("gang")) {
    const nlohmann::json& gang = policy["gang"];
    const nlohmann::json count = gang.is_object() ? gang.value("minCount", nlohmann::json()) : nlohmann::json();
    if (!count.is_number_integer() || count.get<int64_t>() < 1 || count.get<int64_t>() > decision::kMaxAnnotatedCount) {
      return absl::InvalidArgumentError(absl::StrCat(where, ".gang.minCount: expected a whole number from 1 to ",
                                                     decision::kMaxAnnotatedCount, ", got ", count.dump()));
    }
    return std::optional<int>(count.get<int>());
  }
  if (policy.is_object() && policy.contains("basic")) return std::optional<int>();
  return absl::InvalidArgumentError(absl::StrCat(where, ": neither gang nor basic"));
}

const nlohmann::json& At(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNull;
  return object.is_object() && object.contains(key) ? object[key] : kNull;
}

}  // namespace

std::optional<WorkloadApiObject> WorkloadApiObjectOf(const kube::Pod& pod) {
  if (pod.spec.scheduling_group && !pod.spec.scheduling_group->pod_group_name.empty()) {
    return WorkloadApiObject{"scheduling.k8s.io/v1alpha2", "podgroups", pod.metadata.namespace_name,
                             pod.spec.scheduling_group->pod_group_name};
  }
  if (pod.spec.workload_ref && !pod.spec.workload_ref->name.empty()) {
    return WorkloadApiObject{"scheduling.k8s.io/v1alpha1", "workloads", pod.metadata.namespace_name,
                             pod.spec.workload_ref->name};
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<int>> GangMinCountIn(const nlohmann::json& object, const kube::Pod& pod) {
  const nlohmann::json& spec = At(object, "spec");
  if (pod.spec.scheduling_group && !pod.spec.scheduling_group->pod_group_name.empty()) {
    return CountOfPolicy(At(spec, "schedulingPolicy"),
                         absl::StrCat("PodGroup ", pod.spec.scheduling_group->pod_group_name, " spec.schedulingPolicy"));
  }
  if (!pod.spec.workload_ref) return absl::InvalidArgumentError("the pod names no PodGroup or Workload");
  const kube::WorkloadReference& ref = *pod.spec.workload_ref;
  const nlohmann::json& groups = At(spec, "podGroups");
  if (groups.is_array()) {
    for (const nlohmann::json& group : groups) {
      if (At(group, "name") == ref.pod_group) {
        return CountOfPolicy(At(group, "policy"), absl::StrCat("Workload ", ref.name, " pod group ", ref.pod_group, " policy"));
      }
    }
  }
  return absl::NotFoundError(absl::StrCat("Workload ", ref.name, " has no pod group ", ref.pod_group));
}

}  // namespace topofit::codec
