#include "codec/kube_json.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "kube/node_affinity.h"
#include "kube/pod_resources.h"
#include "tests/kube/status_matchers.h"

namespace topofit::codec {
namespace {

using Json = nlohmann::json;
using kube::NodeSelectorOperator;
using kube::TaintEffect;
using kube::TolerationOperator;

// A pod as kube-scheduler sends it in ExtenderArgs.Pod: the fields topofit reads, a few it does not, and
// the nulls Go writes for nil pointers and slices.
constexpr const char* kTrainingPod = R"({
  "kind": "Pod", "apiVersion": "v1",
  "metadata": {
    "name": "train-0", "namespace": "ml", "uid": "5c1d", "resourceVersion": "812",
    "generateName": "train-", "creationTimestamp": "2025-03-01T12:00:00Z", "deletionTimestamp": null,
    "labels": {"app": "train"}, "annotations": {"topofit.io/min-link": "NV"},
    "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "train", "uid": "9", "controller": true}],
    "managedFields": [{"manager": "kubectl"}]
  },
  "spec": {
    "containers": [
      {"name": "trainer", "image": "pytorch", "resources": {
        "requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "4"},
        "limits": {"nvidia.com/gpu": "4"}}},
      {"name": "logger", "resources": {"requests": {"cpu": "100m"}, "limits": null}}
    ],
    "initContainers": [
      {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": 0.5}}},
      {"name": "fetch", "resources": {}}
    ],
    "overhead": null,
    "resources": {"limits": {"memory": "80Gi"}},
    "nodeSelector": {"nvidia.com/gpu.product": "H100"},
    "affinity": {"nodeAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "nvidia.com/gpu.count", "operator": "Gt", "values": ["3"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-7"]}]}
      ]},
      "preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 50, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}}
      ]
    }, "podAntiAffinity": null},
    "tolerations": [
      {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
      {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
      {"key": "dedicated", "value": "ml"}
    ],
    "schedulerName": "topofit", "nodeName": "", "priority": 1000, "priorityClassName": "high",
    "volumes": null
  },
  "status": {
    "phase": "Pending", "nominatedNodeName": "gpu-3",
    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "..."}]
  }
})";

constexpr const char* kGpuNode = R"({
  "metadata": {"name": "gpu-7", "labels": {"nvidia.com/gpu.product": "H100", "nvidia.com/gpu.count": "8"}},
  "spec": {"providerID": "aws:///us-east-1a/i-0abc", "unschedulable": false,
           "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]},
  "status": {
    "capacity": {"cpu": "192", "memory": "2097152Ki", "nvidia.com/gpu": "8", "pods": "110"},
    "allocatable": {"cpu": "191500m", "memory": "2000Gi", "nvidia.com/gpu": "8"},
    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
    "images": null
  }
})";

kube::Pod RequirePod(const Json& json) {
  absl::StatusOr<kube::Pod> pod = PodFromJson(json);
  REQUIRE_OK(pod);
  return *std::move(pod);
}

kube::Node RequireNode(const Json& json) {
  absl::StatusOr<kube::Node> node = NodeFromJson(json);
  REQUIRE_OK(node);
  return *std::move(node);
}

TEST_CASE("PodFromJson reads what the extender needs", "[kube_json]") {
  const kube::Pod pod = RequirePod(Json::parse(kTrainingPod));

  CHECK(pod.metadata.name == "train-0");
  CHECK(pod.metadata.namespace_name == "ml");
  CHECK(pod.metadata.uid == "5c1d");
  CHECK(pod.metadata.resource_version == "812");
  CHECK(pod.metadata.generate_name == "train-");
  CHECK(pod.metadata.creation_timestamp_seconds == 1740830400);  // 2025-03-01T12:00:00Z
  CHECK_FALSE(pod.metadata.has_deletion_timestamp);
  CHECK(pod.metadata.labels == kube::StringMap{{"app", "train"}});
  CHECK(pod.metadata.annotations.at("topofit.io/min-link") == "NV");
  REQUIRE(pod.metadata.owner_references.size() == 1);
  CHECK(pod.metadata.owner_references[0].kind == "Job");
  CHECK(pod.metadata.owner_references[0].name == "train");
  CHECK(pod.metadata.owner_references[0].controller);

  REQUIRE(pod.spec.containers.size() == 2);
  CHECK(pod.spec.containers[0].name == "trainer");
  CHECK(pod.spec.containers[0].resources.requests ==
        kube::ResourceList{{"cpu", 8000}, {"memory", 68719476736000}, {"nvidia.com/gpu", 4000}});  // 64 * 2^30
  CHECK(pod.spec.containers[1].resources.limits.empty());
  REQUIRE(pod.spec.init_containers.size() == 2);
  CHECK(pod.spec.init_containers[0].restart_policy == kube::ContainerRestartPolicy::kAlways);
  CHECK(pod.spec.init_containers[0].resources.requests.at("cpu") == 500);  // a bare JSON number 0.5
  CHECK(pod.spec.init_containers[1].restart_policy == kube::ContainerRestartPolicy::kUnset);
  CHECK(pod.spec.overhead.empty());
  CHECK(pod.spec.resources.limits.at("memory") == 85899345920000);  // 80 * 2^30 * 1000
  CHECK(pod.spec.node_selector.at("nvidia.com/gpu.product") == "H100");

  REQUIRE(pod.spec.required_node_affinity.has_value());
  const auto& terms = pod.spec.required_node_affinity->terms;
  REQUIRE(terms.size() == 2);
  REQUIRE(terms[0].match_expressions.size() == 1);
  CHECK(terms[0].match_expressions[0].key == "nvidia.com/gpu.count");
  CHECK(terms[0].match_expressions[0].op == NodeSelectorOperator::kGt);
  CHECK(terms[0].match_expressions[0].values == std::vector<std::string>{"3"});
  REQUIRE(terms[1].match_fields.size() == 1);
  CHECK(terms[1].match_fields[0].op == NodeSelectorOperator::kIn);
  REQUIRE(pod.spec.preferred_node_affinity.size() == 1);
  CHECK(pod.spec.preferred_node_affinity[0].weight == 50);
  CHECK(pod.spec.preferred_node_affinity[0].preference.match_expressions[0].values[0] == "a");

  REQUIRE(pod.spec.tolerations.size() == 3);
  CHECK(pod.spec.tolerations[0].op == TolerationOperator::kExists);
  CHECK(pod.spec.tolerations[0].effect == TaintEffect::kNoSchedule);
  CHECK_FALSE(pod.spec.tolerations[0].toleration_seconds.has_value());
  CHECK(pod.spec.tolerations[1].toleration_seconds == 300);
  CHECK(pod.spec.tolerations[2].op == TolerationOperator::kEqual);  // an absent operator means Equal
  CHECK(pod.spec.tolerations[2].effect == TaintEffect::kNone);
  CHECK(pod.spec.scheduler_name == "topofit");
  CHECK(pod.spec.node_name.empty());
  CHECK(pod.spec.priority == 1000);
  CHECK(pod.spec.priority_class_name == "high");

  CHECK(pod.status.phase == "Pending");
  CHECK(pod.status.nominated_node_name == "gpu-3");
  REQUIRE(pod.status.conditions.size() == 1);
  CHECK(pod.status.conditions[0].type == "PodScheduled");
  CHECK(pod.status.conditions[0].status == "False");
  CHECK(pod.status.conditions[0].reason == "Unschedulable");

  // The decoded pod feeds the pure rules directly.
  CHECK(*kube::GpuRequest(pod) == 4);
  // cpu: regular 8 + 100m + sidecar 500m = 8600m; init peak 500m + 0 -> 8600m
  CHECK(kube::EffectiveRequestMilli(pod, "cpu") == 8600);
  // memory: the pod-level limit (80Gi) stands in for the pod-level request
  CHECK(kube::EffectiveRequestMilli(pod, "memory") == 85899345920000);
}

TEST_CASE("PodFromJson reads the Workload API's gang membership", "[kube_json]") {
  SECTION("1.35 spec.workloadRef") {
    const kube::Pod pod = RequirePod(Json::parse(R"({"metadata": {"name": "w-0", "namespace": "ml"},
        "spec": {"workloadRef": {"name": "train", "podGroup": "workers", "podGroupReplicaKey": "r1"}}})"));
    REQUIRE(pod.spec.workload_ref.has_value());
    CHECK(*pod.spec.workload_ref ==
          kube::WorkloadReference{.name = "train", .pod_group = "workers", .pod_group_replica_key = "r1"});
    CHECK_FALSE(pod.spec.scheduling_group.has_value());
  }
  SECTION("1.36 spec.schedulingGroup") {
    const kube::Pod pod = RequirePod(
        Json::parse(R"({"metadata": {"name": "w-0"}, "spec": {"schedulingGroup": {"podGroupName": "train-workers"}}})"));
    REQUIRE(pod.spec.scheduling_group.has_value());
    CHECK(pod.spec.scheduling_group->pod_group_name == "train-workers");
    CHECK_FALSE(pod.spec.workload_ref.has_value());
  }
  SECTION("null reads as absent, as in Go") {
    const kube::Pod pod =
        RequirePod(Json::parse(R"({"metadata": {"name": "p"}, "spec": {"workloadRef": null, "schedulingGroup": null}})"));
    CHECK_FALSE(pod.spec.workload_ref.has_value());
    CHECK_FALSE(pod.spec.scheduling_group.has_value());
  }
}

TEST_CASE("PodFromJson reads the pod's ResourceClaims and the names of those made from templates", "[kube_json][dra]") {
  const kube::Pod pod = RequirePod(Json::parse(R"({"metadata": {"name": "trainer-0", "namespace": "ml"},
      "spec": {"resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": "two-gpus-one-root"},
                                  {"name": "shared", "resourceClaimName": "team-gpus"}],
               "containers": [{"name": "main", "resources": {"claims": [{"name": "gpus"}]}}]},
      "status": {"resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "trainer-0-gpus-7hq2d"},
                                           {"name": "unneeded", "resourceClaimName": null}]}})"));
  REQUIRE(pod.spec.resource_claims.size() == 2);
  CHECK(pod.spec.resource_claims[0] == kube::PodResourceClaim{.name = "gpus", .resource_claim_name = std::nullopt,
                                                              .resource_claim_template_name = "two-gpus-one-root"});
  CHECK(pod.spec.resource_claims[1] == kube::PodResourceClaim{.name = "shared", .resource_claim_name = "team-gpus",
                                                              .resource_claim_template_name = std::nullopt});
  REQUIRE(pod.status.resource_claim_statuses.size() == 2);
  CHECK(pod.status.resource_claim_statuses[0] ==
        kube::PodResourceClaimStatus{.name = "gpus", .resource_claim_name = "trainer-0-gpus-7hq2d"});
  CHECK_FALSE(pod.status.resource_claim_statuses[1].resource_claim_name.has_value());
  CHECK_THAT(std::string(PodFromJson(Json::parse(R"({"spec": {"resourceClaims": [{"name": "g", "resourceClaimName": 7}]}})"))
                             .status()
                             .message()),
             Catch::Contains("spec.resourceClaims[0].resourceClaimName"));
}

TEST_CASE("NodeFromJson reads what the extender needs", "[kube_json]") {
  const kube::Node node = RequireNode(Json::parse(kGpuNode));
  CHECK(node.metadata.name == "gpu-7");
  CHECK(node.metadata.labels.at("nvidia.com/gpu.count") == "8");
  CHECK(node.spec.provider_id == "aws:///us-east-1a/i-0abc");
  CHECK_FALSE(node.spec.unschedulable);
  REQUIRE(node.spec.taints.size() == 1);
  CHECK(node.spec.taints[0].effect == TaintEffect::kNoSchedule);
  CHECK(node.status.capacity.at("memory") == 2147483648000);  // 2097152 * 1024 * 1000
  CHECK(node.status.capacity.at("pods") == 110000);
  CHECK(node.status.allocatable.at("cpu") == 191500);
  CHECK(node.status.allocatable.at("nvidia.com/gpu") == 8000);
  REQUIRE(node.status.conditions.size() == 1);
  CHECK(node.status.conditions[0].reason == "KubeletReady");

  const kube::Pod pod = RequirePod(Json::parse(kTrainingPod));
  CHECK(kube::MatchesNodeSelector(pod, node));  // product H100, and 8 > 3
  CHECK(kube::ToleratesTaints(pod, node));      // nvidia.com/gpu Exists
}

TEST_CASE("NodeTemplateToJson writes what NodeFromJson reads back alike", "[kube_json]") {
  kube::Node node = RequireNode(Json::parse(kGpuNode));
  node.metadata.annotations["topofit.io/price-per-node-hour"] = "98.32";
  node.spec.taints.push_back({"dedicated", "", TaintEffect::kUnknown});  // an effect this build does not know
  const Json written = NodeTemplateToJson(node);
  CHECK(written["status"]["allocatable"]["cpu"] == "191500m");
  CHECK(written["status"]["allocatable"]["nvidia.com/gpu"] == "8");
  const kube::Node read = RequireNode(written);
  CHECK(read.metadata.name == node.metadata.name);
  CHECK(read.metadata.labels == node.metadata.labels);
  CHECK(read.metadata.annotations == node.metadata.annotations);
  CHECK(read.status.capacity == node.status.capacity);
  CHECK(read.status.allocatable == node.status.allocatable);
  REQUIRE(read.spec.taints.size() == 2);
  CHECK(read.spec.taints[0].key == "nvidia.com/gpu");
  CHECK(read.spec.taints[0].value == "present");
  CHECK(read.spec.taints[0].effect == TaintEffect::kNoSchedule);
  CHECK(read.spec.taints[1].effect == TaintEffect::kUnknown);
  const kube::Pod pod = RequirePod(Json::parse(kTrainingPod));
  CHECK(kube::MatchesNodeSelector(pod, read) == kube::MatchesNodeSelector(pod, node));
}

TEST_CASE("Decoding is tolerant of nulls and absent fields", "[kube_json]") {
  const kube::Pod empty = RequirePod(Json::object());
  CHECK(empty.metadata.name.empty());
  CHECK_FALSE(empty.spec.required_node_affinity.has_value());

  const kube::Pod nulls = RequirePod(Json::parse(R"({"metadata": null, "spec": {"containers": [null,
      {"name": null, "resources": {"requests": {"cpu": null}}}], "affinity": {"nodeAffinity": null},
      "priority": null}, "status": null})"));
  REQUIRE(nulls.spec.containers.size() == 2);
  CHECK(nulls.spec.containers[1].resources.requests.at("cpu") == 0);  // a null Quantity is zero in Go
  CHECK_FALSE(nulls.spec.priority.has_value());

  // A required affinity that is present but empty is kept apart from an absent one: it matches nothing.
  const kube::Pod empty_required = RequirePod(Json::parse(
      R"({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {}}}}})"));
  REQUIRE(empty_required.spec.required_node_affinity.has_value());
  CHECK(empty_required.spec.required_node_affinity->terms.empty());

  const kube::Node node = RequireNode(Json::parse(R"({"spec": {"taints": null}, "status": {"capacity": {}}})"));
  CHECK(node.spec.taints.empty());
}

TEST_CASE("Decoding names the JSON path of a wrong value", "[kube_json]") {
  struct Row {
    const char* name;
    const char* json;
    const char* message;
  };
  const Row rows[] = {
      {"not an object", R"([1, 2])", "pod: expected an object, found array"},
      {"top-level null", R"(null)", "pod: expected an object, found null"},
      {"metadata not an object", R"({"metadata": "x"})", "metadata: expected an object, found string"},
      {"name not a string", R"({"metadata": {"name": 7}})", "metadata.name: expected a string, found number"},
      {"label value not a string", R"({"metadata": {"labels": {"a": true}}})",
       R"(metadata.labels["a"]: expected a string, found boolean)"},
      {"bad timestamp", R"({"metadata": {"creationTimestamp": "yesterday"}})",
       "metadata.creationTimestamp: not an RFC 3339 time: \"yesterday\""},
      {"containers not an array", R"({"spec": {"containers": {}}})",
       "spec.containers: expected an array, found object"},
      {"container not an object", R"({"spec": {"containers": [{}, 3]}})",
       "spec.containers[1]: expected an object, found number"},
      {"bad quantity",
       R"({"spec": {"containers": [{}, {"resources": {"requests": {"nvidia.com/gpu": "two"}}}]}})",
       R"(spec.containers[1].resources.requests["nvidia.com/gpu"]: not a quantity: "two" (expected a number))"},
      {"quantity of the wrong type", R"({"spec": {"overhead": {"cpu": [1]}}})",
       R"(spec.overhead["cpu"]: expected a quantity string, found array)"},
      {"quantity too large", R"({"spec": {"resources": {"limits": {"memory": "100Ei"}}}})",
       R"(spec.resources.limits["memory"]: quantity "100Ei" is too large)"},
      {"priority not an integer", R"({"spec": {"priority": 1.5}})", "spec.priority: expected an integer, found number"},
      {"priority out of int32", R"({"spec": {"priority": 4294967296}})", "spec.priority: must be -2147483648 to"},
      {"operator not a string",
       R"({"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
           {"nodeSelectorTerms": [{"matchExpressions": [{"key": "k", "operator": 1}]}]}}}}})",
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
       ".matchExpressions[0].operator: expected a string, found number"},
      {"values not an array",
       R"({"spec": {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution":
           [{"weight": 1, "preference": {"matchFields": [{"values": "a"}]}}]}}}})",
       "preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchFields[0].values: expected an array"},
      {"tolerationSeconds not an integer", R"({"spec": {"tolerations": [{"tolerationSeconds": "5"}]}})",
       "spec.tolerations[0].tolerationSeconds: expected an integer, found string"},
      {"podGroup not a string", R"({"spec": {"workloadRef": {"podGroup": 3}}})",
       "spec.workloadRef.podGroup: expected a string, found number"},
      {"schedulingGroup not an object", R"({"spec": {"schedulingGroup": "train"}})",
       "spec.schedulingGroup: expected an object, found string"},
      {"controller not a boolean", R"({"metadata": {"ownerReferences": [{"controller": "yes"}]}})",
       "metadata.ownerReferences[0].controller: expected a boolean, found string"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      CHECK_STATUS(PodFromJson(Json::parse(row.json)), absl::StatusCode::kInvalidArgument, row.message);
    }
  }

  SECTION("node fields") {
    CHECK_STATUS(NodeFromJson(Json::parse(R"({"spec": {"unschedulable": "true"}})")),
                 absl::StatusCode::kInvalidArgument, "spec.unschedulable: expected a boolean, found string");
    CHECK_STATUS(NodeFromJson(Json::parse(R"({"status": {"allocatable": {"nvidia.com/gpu": "8 GPUs"}}})")),
                 absl::StatusCode::kInvalidArgument, R"(status.allocatable["nvidia.com/gpu"]: not a quantity)");
    CHECK_STATUS(NodeFromJson(Json::parse(R"({"spec": {"taints": [{"effect": 3}]}})")),
                 absl::StatusCode::kInvalidArgument, "spec.taints[0].effect: expected a string");
    CHECK_STATUS(NodeFromJson(Json(42)), absl::StatusCode::kInvalidArgument, "node: expected an object, found number");
  }

  SECTION("a key that is not UTF-8 still gives a message, not an exception") {
    // Only a programmatically built document can hold such a key (the parser rejects it); dumping it
    // for the path would throw without care.
    Json pod = Json::object();
    pod["metadata"]["labels"]["bad\xff"] = 1;
    CHECK_STATUS(PodFromJson(pod), absl::StatusCode::kInvalidArgument, "expected a string, found number");
  }
}

// The real round-trip fixtures of kubernetes/api (testdata), read in place. Every field holds a synthetic
// value ("nameValue", quantities "0", "operatorValue"); unknown enumeration strings must decode.
std::filesystem::path FixtureDir() {
  const char* shared = std::getenv("TOPOFIT_SHARED_DIR");
  return std::filesystem::path(shared != nullptr ? shared : TOPOFIT_DEFAULT_SHARED_DIR) / "fixtures" / "k8s";
}

Json ReadJsonFile(const std::filesystem::path& path) {
  std::ifstream file(path);
  INFO(path.string());
  REQUIRE(file.good());
  return Json::parse(file);
}

TEST_CASE("Upstream fixtures decode", "[kube_json][fixtures]") {
  const std::filesystem::path dir = FixtureDir();
  if (!std::filesystem::is_directory(dir)) {
    WARN("skipped: no fixtures at " << dir.string());
    return;
  }
  for (const char* version : {"HEAD", "v1.33.0", "v1.34.0", "v1.35.0", "v1.36.0"}) {
    SECTION(version) {
      const kube::Pod pod = RequirePod(ReadJsonFile(dir / version / "core.v1.Pod.json"));
      CHECK(pod.metadata.name == "nameValue");
      CHECK(pod.metadata.namespace_name == "namespaceValue");
      CHECK(pod.metadata.uid == "uidValue");
      CHECK(pod.metadata.resource_version == "resourceVersionValue");
      CHECK(pod.metadata.generate_name == "generateNameValue");
      CHECK(pod.metadata.creation_timestamp_seconds == 1199149261);  // 2008-01-01T01:01:01Z
      CHECK(pod.metadata.has_deletion_timestamp);
      CHECK(pod.metadata.labels == kube::StringMap{{"labelsKey", "labelsValue"}});
      CHECK(pod.metadata.annotations == kube::StringMap{{"annotationsKey", "annotationsValue"}});
      REQUIRE(pod.metadata.owner_references.size() == 1);
      CHECK(pod.metadata.owner_references[0].kind == "kindValue");
      CHECK(pod.metadata.owner_references[0].controller);

      REQUIRE(pod.spec.containers.size() == 1);
      CHECK(pod.spec.containers[0].name == "nameValue");
      CHECK(pod.spec.containers[0].resources.requests == kube::ResourceList{{"requestsKey", 0}});
      CHECK(pod.spec.containers[0].resources.limits == kube::ResourceList{{"limitsKey", 0}});
      CHECK(pod.spec.containers[0].restart_policy == kube::ContainerRestartPolicy::kUnknown);  // "restartPolicyValue"
      REQUIRE(pod.spec.init_containers.size() == 1);
      CHECK(pod.spec.init_containers[0].resources.requests == kube::ResourceList{{"requestsKey", 0}});
      CHECK(pod.spec.overhead == kube::ResourceList{{"overheadKey", 0}});
      CHECK(pod.spec.resources.requests == kube::ResourceList{{"requestsKey", 0}});
      CHECK(pod.spec.resources.limits == kube::ResourceList{{"limitsKey", 0}});
      CHECK(pod.spec.node_selector == kube::StringMap{{"nodeSelectorKey", "nodeSelectorValue"}});

      REQUIRE(pod.spec.required_node_affinity.has_value());
      REQUIRE(pod.spec.required_node_affinity->terms.size() == 1);
      const kube::NodeSelectorTerm& term = pod.spec.required_node_affinity->terms[0];
      REQUIRE(term.match_expressions.size() == 1);
      CHECK(term.match_expressions[0].key == "keyValue");
      CHECK(term.match_expressions[0].op == NodeSelectorOperator::kUnknown);  // "operatorValue"
      CHECK(term.match_expressions[0].values == std::vector<std::string>{"valuesValue"});
      REQUIRE(term.match_fields.size() == 1);
      CHECK(term.match_fields[0].op == NodeSelectorOperator::kUnknown);
      REQUIRE(pod.spec.preferred_node_affinity.size() == 1);
      CHECK(pod.spec.preferred_node_affinity[0].weight == 1);

      REQUIRE(pod.spec.tolerations.size() == 1);
      CHECK(pod.spec.tolerations[0].key == "keyValue");
      CHECK(pod.spec.tolerations[0].op == TolerationOperator::kUnknown);
      CHECK(pod.spec.tolerations[0].value == "valueValue");
      CHECK(pod.spec.tolerations[0].effect == TaintEffect::kUnknown);
      CHECK(pod.spec.tolerations[0].toleration_seconds == 5);
      CHECK(pod.spec.scheduler_name == "schedulerNameValue");
      CHECK(pod.spec.node_name == "nodeNameValue");
      CHECK(pod.spec.priority == 25);
      CHECK(pod.spec.priority_class_name == "priorityClassNameValue");
      // The Workload API's field of each release: 1.35's workloadRef, replaced by schedulingGroup in 1.36.
      const std::string release = version;
      CHECK(pod.spec.workload_ref.has_value() == (release == "v1.35.0"));
      if (pod.spec.workload_ref) {
        CHECK(*pod.spec.workload_ref == kube::WorkloadReference{.name = "nameValue",
                                                                .pod_group = "podGroupValue",
                                                                .pod_group_replica_key = "podGroupReplicaKeyValue"});
      }
      CHECK(pod.spec.scheduling_group.has_value() == (release == "v1.36.0" || release == "HEAD"));
      if (pod.spec.scheduling_group) CHECK(pod.spec.scheduling_group->pod_group_name == "podGroupNameValue");

      CHECK(pod.status.phase == "phaseValue");
      CHECK(pod.status.nominated_node_name == "nominatedNodeNameValue");
      REQUIRE(pod.status.conditions.size() == 1);
      CHECK(pod.status.conditions[0].type == "typeValue");
      CHECK(pod.status.conditions[0].status == "statusValue");
      CHECK(pod.status.conditions[0].reason == "reasonValue");
      // KEP-5004's claim for extended resources DRA serves: in the API from 1.34.
      CHECK(pod.status.extended_resource_claim_status.has_value() == (release != "v1.33.0"));
      if (pod.status.extended_resource_claim_status) {
        CHECK(*pod.status.extended_resource_claim_status ==
              kube::PodExtendedResourceClaimStatus{
                  .resource_claim_name = "resourceClaimNameValue",
                  .request_mappings = {{.container_name = "containerNameValue",
                                        .resource_name = "resourceNameValue",
                                        .request_name = "requestNameValue"}}});
      }

      const kube::Node node = RequireNode(ReadJsonFile(dir / version / "core.v1.Node.json"));
      CHECK(node.metadata.name == "nameValue");
      CHECK(node.metadata.labels == kube::StringMap{{"labelsKey", "labelsValue"}});
      CHECK(node.spec.unschedulable);
      CHECK(node.spec.provider_id == "providerIDValue");
      REQUIRE(node.spec.taints.size() == 1);
      CHECK(node.spec.taints[0].key == "keyValue");
      CHECK(node.spec.taints[0].value == "valueValue");
      CHECK(node.spec.taints[0].effect == TaintEffect::kUnknown);
      CHECK(node.status.capacity == kube::ResourceList{{"capacityKey", 0}});
      CHECK(node.status.allocatable == kube::ResourceList{{"allocatableKey", 0}});
      REQUIRE(node.status.conditions.size() == 1);
      CHECK(node.status.conditions[0].reason == "reasonValue");

      // Synthetic values match nothing: the unknown operator fails its only term.
      CHECK_FALSE(kube::MatchesNodeSelector(pod, node));
      CHECK(*kube::GpuRequest(pod) == 0);
    }
  }
}

}  // namespace
}  // namespace topofit::codec
