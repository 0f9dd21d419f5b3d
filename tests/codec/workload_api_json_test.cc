#include "codec/workload_api_json.h"

#include <catch2/catch.hpp>

#include "tests/kube/builders.h"
#include "tests/kube/status_matchers.h"

namespace topofit::codec {
namespace {

using kube::testing::MakePod;
using nlohmann::json;

std::string Named(const kube::Pod& pod) {
  const std::optional<WorkloadApiObject> named = WorkloadApiObjectOf(pod);
  return named ? named->group_version + " " + named->resource + " " + named->namespace_name + "/" + named->name : "";
}

TEST_CASE("Workload API: the object a pod's gang count lives in", "[workload_api]") {
  CHECK(Named(MakePod().namespaceName("ml").schedulingGroup("train-workers")) ==
        "scheduling.k8s.io/v1alpha2 podgroups ml/train-workers");
  CHECK(Named(MakePod().namespaceName("ml").workloadRef("train", "workers", "0")) ==
        "scheduling.k8s.io/v1alpha1 workloads ml/train");
  // both named: the PodGroup (Kubernetes 1.36) wins, as decision::GangOf's precedence
  CHECK(Named(MakePod().namespaceName("ml").schedulingGroup("g").workloadRef("w", "workers")) ==
        "scheduling.k8s.io/v1alpha2 podgroups ml/g");
  CHECK(Named(MakePod()).empty());
}

TEST_CASE("Workload API: a PodGroup's gang.minCount, or none for a basic policy", "[workload_api]") {
  const kube::Pod pod = MakePod().schedulingGroup("train-workers");
  // Kubernetes 1.36's PodGroup, as the API server returns it
  const json gang = json::parse(R"({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
    "metadata": {"name": "train-workers", "namespace": "default"},
    "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "train", "podGroupTemplateName": "workers"}},
             "schedulingPolicy": {"gang": {"minCount": 16}}}})");
  absl::StatusOr<std::optional<int>> count = GangMinCountIn(gang, pod);
  REQUIRE_OK(count);
  CHECK(*count == 16);
  count = GangMinCountIn(json::parse(R"({"spec": {"schedulingPolicy": {"basic": {}}}})"), pod);
  REQUIRE_OK(count);
  CHECK_FALSE(count->has_value());
  for (const char* bad : {R"({"spec": {"schedulingPolicy": {"gang": {"minCount": 0}}}})",
                          R"({"spec": {"schedulingPolicy": {"gang": {"minCount": "16"}}}})",
                          R"({"spec": {"schedulingPolicy": {"gang": {}}}})",
                          R"({"spec": {"schedulingPolicy": {"gang": {"minCount": 100001}}}})"}) {
    INFO(bad);
    CHECK_STATUS(GangMinCountIn(json::parse(bad), pod), absl::StatusCode::kInvalidArgument, "gang.minCount");
  }
  CHECK_STATUS(GangMinCountIn(json::parse(R"({"spec": {}})"), pod), absl::StatusCode::kInvalidArgument,
               "neither gang nor basic");
  CHECK_STATUS(GangMinCountIn(json::parse("[]"), pod), absl::StatusCode::kInvalidArgument, "neither gang nor basic");
}

TEST_CASE("Workload API: a Workload's group by the pod's podGroup name", "[workload_api]") {
  const json workload = json::parse(R"({"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
    "metadata": {"name": "train", "namespace": "default"},
    "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
             "podGroups": [{"name": "driver", "policy": {"basic": {}}},
                           {"name": "workers", "policy": {"gang": {"minCount": 4}}}]}})");
  absl::StatusOr<std::optional<int>> count = GangMinCountIn(workload, MakePod().workloadRef("train", "workers"));
  REQUIRE_OK(count);
  CHECK(*count == 4);
  count = GangMinCountIn(workload, MakePod().workloadRef("train", "driver"));
  REQUIRE_OK(count);
  CHECK_FALSE(count->has_value());
  CHECK_STATUS(GangMinCountIn(workload, MakePod().workloadRef("train", "ps")), absl::StatusCode::kNotFound,
               "Workload train has no pod group ps");
}

}  // namespace
}  // namespace topofit::codec
