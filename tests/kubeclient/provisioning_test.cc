#include "kubeclient/provisioning.h"

#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/kube/status_matchers.h"

namespace topofit::kubeclient {
namespace {

using nlohmann::json;

// A pending pod as the API server returns it, with fields the template must drop (status, volumes,
// env, the pod's own GPU ids, topofit's bookkeeping) beside the scheduling ones it keeps.
json PendingPod(const json& affinity) {
  json pod = json::parse(R"({
    "kind": "Pod", "apiVersion": "v1",
    "metadata": {
      "name": "train-0", "namespace": "ml", "uid": "uid-1", "resourceVersion": "4711",
      "labels": {"app": "train"},
      "annotations": {"topofit.io/min-link": "NV", "topofit.io/gpu-ids": "0,1", "other/x": "y",
                      "topofit.io/placement-preference": "{}"}
    },
    "spec": {
      "schedulerName": "topofit-scheduler",
      "priorityClassName": "high",
      "nodeSelector": {"pool": "gpu"},
      "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
      "volumes": [{"name": "data", "emptyDir": {}}],
      "containers": [{
        "name": "main", "image": "trainer:1", "env": [{"name": "A", "value": "1"}],
        "resources": {"limits": {"nvidia.com/gpu": "4"}, "requests": {"nvidia.com/gpu": "4", "cpu": "8"}}
      }]
    },
    "status": {"phase": "Pending"}
  })");
  if (!affinity.is_null()) pod["spec"]["affinity"] = affinity;
  return pod;
}

// Everything but spec.affinity, which each case writes out.
json ExpectedTemplate(const json& affinity) {
  json expected = json::parse(R"({
    "apiVersion": "v1", "kind": "PodTemplate",
    "metadata": {
      "name": "topofit-train-0", "namespace": "ml",
      "labels": {"app.kubernetes.io/managed-by": "topofit"},
      "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "train-0", "uid": "uid-1"}]
    },
    "template": {
      "metadata": {"labels": {"app": "train"},
                   "annotations": {"topofit.io/min-link": "NV", "topofit.io/stands-for-pod-uid": "uid-1"}},
      "spec": {
        "schedulerName": "topofit-scheduler",
        "priorityClassName": "high",
        "nodeSelector": {"pool": "gpu"},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [{
          "name": "main", "image": "trainer:1",
          "resources": {"limits": {"nvidia.com/gpu": "4"}, "requests": {"nvidia.com/gpu": "4", "cpu": "8"}}
        }]
      }
    }
  })");
  if (!affinity.is_null()) expected["template"]["spec"]["affinity"] = affinity;
  return expected;
}

TEST_CASE("PodTemplateForPod: no node affinity, the exclusion becomes the only term", "[provisioning]") {
  absl::StatusOr<json> got = PodTemplateForPod(PendingPod(nullptr), {"n2", "n1", "n2"});
  REQUIRE_OK(got);
  // Refused names sorted and deduplicated, so the template does not depend on their order.
  CHECK(*got == ExpectedTemplate(json::parse(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["n1", "n2"]}]}]}}})")));
}

TEST_CASE("PodTemplateForPod: the exclusion is ANDed into every existing term", "[provisioning]") {
  const json affinity = json::parse(R"({
    "nodeAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["h100"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n9"]}]}
      ]},
      "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference":
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}}]
    },
    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "train"}}}]}
  })");
  absl::StatusOr<json> got = PodTemplateForPod(PendingPod(affinity), {"n1"});
  REQUIRE_OK(got);
  // Terms are ORed: an exclusion in one term only would let the other term pick a refused node.
  CHECK(*got == ExpectedTemplate(json::parse(R"({
    "nodeAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["h100"]},
                              {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["n1"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n9"]}],
         "matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["n1"]}]}
      ]},
      "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference":
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}}]
    },
    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
      {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "train"}}}]}
  })")));
}

kube::NodeSelectorTerm InstanceType(const char* type) {
  return {{{"node.kubernetes.io/instance-type", kube::NodeSelectorOperator::kIn, {type}}}, {}};
}

TEST_CASE("PodTemplateForPod: confined to shapes, each own term becomes one per shape, then the exclusion", "[provisioning]") {
  const std::vector<kube::NodeSelectorTerm> shapes = {InstanceType("p4d.24xlarge"), InstanceType("p5.48xlarge")};
  // No own term: the shapes are the terms.
  absl::StatusOr<json> plain = PodTemplateForPod(PendingPod(nullptr), {"n1"}, shapes);
  REQUIRE_OK(plain);
  CHECK(*plain == ExpectedTemplate(json::parse(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p4d.24xlarge"]},
                              {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["n1"]}]},
        {"matchExpressions": [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p5.48xlarge"]},
                              {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["n1"]}]}]}}})")));
  // The pod's own terms still hold (terms ORed, so each is ANDed with each shape).
  const json affinity = json::parse(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
                             {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}}})");
  absl::StatusOr<json> own = PodTemplateForPod(PendingPod(affinity), {}, {InstanceType("p4d.24xlarge")});
  REQUIRE_OK(own);
  CHECK(*own == ExpectedTemplate(json::parse(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]},
                              {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p4d.24xlarge"]}]},
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]},
                              {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["p4d.24xlarge"]}]}]}}})")));
}

TEST_CASE("PodTemplateForPod: no refused nodes, the affinity is copied unchanged", "[provisioning]") {
  const json affinity = json::parse(R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [{"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["h100"]}]}]}}})");
  absl::StatusOr<json> got = PodTemplateForPod(PendingPod(affinity), {});
  REQUIRE_OK(got);
  CHECK(*got == ExpectedTemplate(affinity));
  absl::StatusOr<json> plain = PodTemplateForPod(PendingPod(nullptr), {});
  REQUIRE_OK(plain);
  CHECK(*plain == ExpectedTemplate(nullptr));
}

// A claim pod (GPUs from ResourceClaims) as the API server returns it: one claim by name, one made from a
// template (its name in the status), one template entry the controller found needs no claim.
json ClaimPod() {
  json pod = PendingPod(nullptr);
  pod["spec"]["containers"][0]["resources"] = json::parse(R"({
    "requests": {"cpu": "8"},
    "claims": [{"name": "gpus"}, {"name": "channel"}, {"name": "unused"}]})");
  pod["spec"]["initContainers"] = json::parse(R"([{"name": "warm", "image": "warm:1",
    "resources": {"claims": [{"name": "gpus", "request": "gpu"}]}}])");
  pod["spec"]["resourceClaims"] = json::parse(R"([
    {"name": "gpus", "resourceClaimTemplateName": "four-gpus"},
    {"name": "channel", "resourceClaimName": "domain-channel"},
    {"name": "unused", "resourceClaimTemplateName": "maybe"}])");
  pod["status"]["resourceClaimStatuses"] = json::parse(R"([
    {"name": "gpus", "resourceClaimName": "train-0-gpus-x7k2p"}, {"name": "unused"}])");
  return pod;
}

TEST_CASE("PodTemplateForPod: a claim pod's template names the very claims the pod uses", "[provisioning][dra]") {
  absl::StatusOr<json> got = PodTemplateForPod(ClaimPod(), {"n1"});
  REQUIRE_OK(got);
  const json& spec = (*got)["template"]["spec"];
  CHECK(spec["resourceClaims"] == json::parse(R"([
    {"name": "gpus", "resourceClaimName": "train-0-gpus-x7k2p"},
    {"name": "channel", "resourceClaimName": "domain-channel"}])"));
  // The containers name only claims the template has: an entry needing no claim goes from them too.
  CHECK(spec["containers"][0]["resources"] ==
        json::parse(R"({"requests": {"cpu": "8"}, "claims": [{"name": "gpus"}, {"name": "channel"}]})"));
  CHECK(spec["initContainers"][0]["resources"] == json::parse(R"({"claims": [{"name": "gpus", "request": "gpu"}]})"));
}

TEST_CASE("PodTemplateForPod: a claim not made from its template yet leaves nothing to ask with", "[provisioning][dra]") {
  json pod = ClaimPod();
  pod["status"].erase("resourceClaimStatuses");
  CHECK_STATUS(PodTemplateForPod(pod, {"n1"}), absl::StatusCode::kFailedPrecondition,
               "the ResourceClaim of gpus (template \"four-gpus\") is not made yet");
}

TEST_CASE("Templates for pods not made yet carry no claims, nor references to them", "[provisioning][dra]") {
  const json pod_template = SchedulingTemplateOf(ClaimPod(), {});
  CHECK_FALSE(pod_template["spec"].contains("resourceClaims"));
  CHECK(pod_template["spec"]["containers"][0]["resources"] == json::parse(R"({"requests": {"cpu": "8"}})"));
  CHECK(pod_template["spec"]["initContainers"][0]["resources"] == json::object());

  absl::StatusOr<json> gang = PodTemplateForGang(ClaimPod(), "computedomain:ml/domain", kube::NodeSelectorTerm{});
  REQUIRE_OK(gang);
  CHECK_FALSE((*gang)["template"]["spec"].contains("resourceClaims"));
  CHECK_FALSE((*gang)["template"]["spec"]["containers"][0]["resources"].contains("claims"));
}

TEST_CASE("ProvisioningRequestForPod: best-effort atomic scale-up of one pod, owned by it", "[provisioning]") {
  absl::StatusOr<json> got = ProvisioningRequestForPod(PendingPod(nullptr));
  REQUIRE_OK(got);
  CHECK(*got == json::parse(R"({
    "apiVersion": "autoscaling.x-k8s.io/v1", "kind": "ProvisioningRequest",
    "metadata": {
      "name": "topofit-train-0", "namespace": "ml",
      "labels": {"app.kubernetes.io/managed-by": "topofit"},
      "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "train-0", "uid": "uid-1"}]
    },
    "spec": {
      "provisioningClassName": "best-effort-atomic-scale-up.autoscaling.x-k8s.io",
      "podSets": [{"count": 1, "podTemplateRef": {"name": "topofit-train-0"}}]
    }
  })"));
}

TEST_CASE("Builders: a pod without a uid cannot own the objects", "[provisioning]") {
  json pod = PendingPod(nullptr);
  pod["metadata"].erase("uid");
  CHECK_STATUS(PodTemplateForPod(pod, {"n1"}), absl::StatusCode::kInvalidArgument, "uid");
  CHECK_STATUS(ProvisioningRequestForPod(pod), absl::StatusCode::kInvalidArgument, "uid");
}

// The API server's IsDNS1123Subdomain: at most 253 characters, dot-separated parts of [a-z0-9-] that start
// and end alphanumeric (no per-part length limit there).
bool IsDns1123Subdomain(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  for (const absl::string_view part : absl::StrSplit(name, '.')) {
    if (part.empty() || part.front() == '-' || part.back() == '-') return false;
    for (const char c : part) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
    }
  }
  return true;
}

TEST_CASE("ProvisioningObjectName: short names keep the pod's name", "[provisioning]") {
  CHECK(ProvisioningObjectName("train-0") == "topofit-train-0");
  // 8 + 245 = 253: still fits.
  const std::string fits(245, 'a');
  CHECK(ProvisioningObjectName(fits) == "topofit-" + fits);
}

TEST_CASE("ProvisioningObjectName: long names are cut and hashed, valid and distinct", "[provisioning]") {
  // A 253-character pod name made of 63-character labels: "aaa…a.aaa…a.…" ending in "-0" or "-1".
  std::string base;
  while (base.size() < 251) absl::StrAppend(&base, base.empty() ? "" : ".", std::string(62, 'a'));
  base.resize(251);
  const std::string a = base + "-0";
  const std::string b = base + "-1";
  REQUIRE(a.size() == 253);
  const std::string name_a = ProvisioningObjectName(a);
  const std::string name_b = ProvisioningObjectName(b);
  CHECK(name_a.size() <= 253);
  CHECK(IsDns1123Subdomain(name_a));
  CHECK(IsDns1123Subdomain(name_b));
  CHECK(name_a != name_b);
  CHECK(name_a == ProvisioningObjectName(a));  // deterministic
  CHECK(absl::StartsWith(name_a, "topofit-aaaa"));
}

TEST_CASE("GangProvisioningObjectName: the gang id as a DNS name, hashed, valid for any id", "[provisioning]") {
  const std::string name = GangProvisioningObjectName("topofit:ml/train");
  CHECK(absl::StartsWith(name, "topofit-gang-topofit-ml-train-"));
  CHECK(name.size() == std::string("topofit-gang-topofit-ml-train-").size() + 16);
  // label values allow capitals, '_' and '.': ids that read alike still differ
  for (const std::string& id : std::vector<std::string>{"kueue:ml/My_Group", "kueue:ml/my-group", "leaderworkerset:ml/a._b/0",
                                "topofit:ml/" + std::string(300, 'x')}) {
    INFO(id);
    CHECK(IsDns1123Subdomain(GangProvisioningObjectName(id)));
  }
  CHECK(GangProvisioningObjectName("kueue:ml/My_Group") != GangProvisioningObjectName("kueue:ml/my-group"));
}

json GangMember() {
  json pod = PendingPod(nullptr);
  pod["metadata"]["annotations"]["topofit.io/gang"] = "train";
  pod["metadata"]["annotations"]["topofit.io/gang-size"] = "16";
  pod["metadata"]["annotations"]["topofit.io/gang-required-topology"] = "domain";
  pod["metadata"]["annotations"]["example.com/unrelated"] = "x";
  return pod;
}

TEST_CASE("PodTemplateForGang: the member's spec confined to the domain, the gang's annotations kept", "[provisioning]") {
  kube::NodeSelectorTerm domain;
  domain.match_expressions.push_back({"cloud.google.com/gke-nodepool", kube::NodeSelectorOperator::kIn, {"rack-a"}});
  domain.match_expressions.push_back({"nvidia.com/gpu.clique", kube::NodeSelectorOperator::kIn, {"uuid.a"}});
  absl::StatusOr<json> got = PodTemplateForGang(GangMember(), "topofit:ml/train", domain);
  REQUIRE_OK(got);
  const std::string name = GangProvisioningObjectName("topofit:ml/train");
  CHECK((*got)["metadata"]["name"] == name);
  CHECK((*got)["metadata"]["ownerReferences"] ==
        json::parse(R"([{"apiVersion": "v1", "kind": "Pod", "name": "train-0", "uid": "uid-1"}])"));
  const json& annotations = (*got)["template"]["metadata"]["annotations"];
  CHECK(annotations["topofit.io/gang"] == "train");
  CHECK(annotations["topofit.io/gang-size"] == "16");
  CHECK(annotations["topofit.io/gang-required-topology"] == "domain");
  CHECK_FALSE(annotations.contains("example.com/unrelated"));
  CHECK((*got)["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] ==
        json::parse(R"({"nodeSelectorTerms": [{"matchExpressions": [
          {"key": "cloud.google.com/gke-nodepool", "operator": "In", "values": ["rack-a"]},
          {"key": "nvidia.com/gpu.clique", "operator": "In", "values": ["uuid.a"]}]}]})"));

  absl::StatusOr<json> request = ProvisioningRequestForGang(GangMember(), "topofit:ml/train", 6);
  REQUIRE_OK(request);
  CHECK((*request)["metadata"]["name"] == name);
  CHECK((*request)["spec"]["podSets"] == json::array({{{"count", 6}, {"podTemplateRef", {{"name", name}}}}}));
  CHECK((*request)["spec"]["provisioningClassName"] == "best-effort-atomic-scale-up.autoscaling.x-k8s.io");
  CHECK_STATUS(ProvisioningRequestForGang(GangMember(), "topofit:ml/train", 0), absl::StatusCode::kInvalidArgument,
               "count");
}

TEST_CASE("A gang of claim pods: a template per member naming its claims, a pod set per member", "[provisioning][dra]") {
  kube::NodeSelectorTerm domain;
  domain.match_expressions.push_back({"nvidia.com/gpu.clique", kube::NodeSelectorOperator::kIn, {"uuid.a"}});
  absl::StatusOr<json> member = PodTemplateForGangMember(ClaimPod(), "computedomain:ml/train", 1, domain);
  REQUIRE_OK(member);
  const std::string name = GangMemberTemplateName("computedomain:ml/train", 1);
  CHECK(name != GangMemberTemplateName("computedomain:ml/train", 0));
  CHECK(name != GangProvisioningObjectName("computedomain:ml/train"));
  CHECK(IsDns1123Subdomain(name));
  CHECK((*member)["metadata"]["name"] == name);
  CHECK((*member)["metadata"]["ownerReferences"][0]["uid"] == "uid-1");
  CHECK((*member)["template"]["spec"]["resourceClaims"] == json::parse(R"([
    {"name": "gpus", "resourceClaimName": "train-0-gpus-x7k2p"},
    {"name": "channel", "resourceClaimName": "domain-channel"}])"));
  CHECK((*member)["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                                                 ["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] ==
        json::array({"uuid.a"}));

  absl::StatusOr<json> request = ProvisioningRequestForGangMembers(ClaimPod(), "computedomain:ml/train", 3);
  REQUIRE_OK(request);
  CHECK((*request)["metadata"]["name"] == GangProvisioningObjectName("computedomain:ml/train"));
  REQUIRE((*request)["spec"]["podSets"].size() == 3);
  CHECK((*request)["spec"]["podSets"][1] == json({{"count", 1}, {"podTemplateRef", {{"name", name}}}}));
  CHECK_STATUS(ProvisioningRequestForGangMembers(ClaimPod(), "computedomain:ml/train", 33),
               absl::StatusCode::kInvalidArgument, "1 to 32 pod sets");
  CHECK_STATUS(ProvisioningRequestForGangMembers(ClaimPod(), "computedomain:ml/train", 0),
               absl::StatusCode::kInvalidArgument, "1 to 32 pod sets");
}

TEST_CASE("ProvisioningStateOf: only conditions with status True count", "[provisioning]") {
  CHECK_FALSE(ProvisioningStateOf(json::parse(R"({"status": {}})")).provisioned);
  const ProvisioningState state = ProvisioningStateOf(json::parse(R"({"status": {"conditions": [
    {"type": "Accepted", "status": "True"},
    {"type": "Provisioned", "status": "True", "message": "capacity is ready"},
    {"type": "Failed", "status": "False", "message": "nope"},
    {"type": "BookingExpired", "status": "True"},
    {"type": "CapacityRevoked", "status": "Unknown"}]}})"));
  CHECK(state.provisioned);
  CHECK_FALSE(state.failed);
  CHECK(state.booking_expired);
  CHECK_FALSE(state.capacity_revoked);
  CHECK(state.message == "capacity is ready");
  const ProvisioningState failed = ProvisioningStateOf(json::parse(R"({"status": {"conditions": [
    {"type": "Failed", "status": "True", "message": "out of stock"},
    {"type": "CapacityRevoked", "status": "True"}]}})"));
  CHECK(failed.failed);
  CHECK(failed.capacity_revoked);
  CHECK(failed.message == "out of stock");
}

}  // namespace
}  // namespace topofit::kubeclient
