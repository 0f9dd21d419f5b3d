#include "kubeclient/headroom_writer.h"

#include <catch2/catch.hpp>

#include "kubeclient/capacity_buffers.h"
#include "tests/kubeclient/fake_api_server.h"

namespace topofit::kubeclient {
namespace {

using nlohmann::json;
using testing::FakeApiServer;
using testing::StatusJson;

constexpr char kBuffers[] = "/apis/autoscaling.x-k8s.io/v1beta1/namespaces/headroom/capacitybuffers";
constexpr char kTemplates[] = "/api/v1/namespaces/headroom/podtemplates";
constexpr char kDeployments[] = "/apis/apps/v1/namespaces/headroom/deployments";

// A 4-GPU inference replica that requires NVLink, as the API server returns it.
json Replica() {
  return json::parse(R"({
    "metadata": {"name": "llm-70b-7f9c", "namespace": "serving", "uid": "uid-1",
                 "labels": {"app": "llm-70b"},
                 "annotations": {"topofit.io/min-link": "NV", "topofit.io/topology-policy": "required",
                                 "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
    "spec": {"schedulerName": "topofit", "priorityClassName": "serving", "priority": 1000,
             "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
             "containers": [{"name": "vllm", "image": "vllm:1", "ports": [{"containerPort": 8000}],
                             "resources": {"requests": {"cpu": "16", "nvidia.com/gpu": "4"},
                                           "limits": {"nvidia.com/gpu": "4"}}}]},
    "status": {"phase": "Running"}
  })");
}

decision::HeadroomShape Shape4() {
  return decision::HeadroomShape{.gpus = 4, .min_link = "NV", .min_bandwidth = "", .topology_policy = "required",
                                 .family = ""};
}
decision::HeadroomShape Shape1() {
  return decision::HeadroomShape{.gpus = 1, .min_link = "", .min_bandwidth = "", .topology_policy = "", .family = ""};
}

json ResourceList(const char* group_version, bool with_buffers) {
  json resources = json::array({{{"name", "provisioningrequests"}, {"namespaced", true}, {"kind", "ProvisioningRequest"}}});
  if (with_buffers) resources.push_back({{"name", "capacitybuffers"}, {"namespaced", true}, {"kind", "CapacityBuffer"}});
  return {{"kind", "APIResourceList"}, {"groupVersion", group_version}, {"resources", resources}};
}

struct Fixture {
  Fixture() : certs(topofit::testing::TestCerts::Create().value()), server(*certs) {
    rest = testing::DirectClientFor(server, *certs);
  }
  std::unique_ptr<topofit::testing::TestCerts> certs;
  FakeApiServer server;
  std::unique_ptr<RestClient> rest;
};

TEST_CASE("Headroom objects are named for their shape, DNS-safe and at most 63 characters", "[headroom_writer]") {
  CHECK(HeadroomObjectName(Shape4()) == "topofit-headroom-4gpu-nv-required");
  decision::HeadroomShape long_shape = Shape4();
  long_shape.family = "NVIDIA-H100-80GB-HBM3+NVIDIA-A100-SXM4-80GB+NVIDIA-GH200-480GB";
  const std::string name = HeadroomObjectName(long_shape);
  CHECK(name.size() == 63);
  CHECK(name.starts_with("topofit-headroom-4gpu-nv-required-nvidia-h100"));
  long_shape.family += "+B200";
  CHECK(HeadroomObjectName(long_shape) != name);  // the cut keeps them apart
}

TEST_CASE("A buffer's PodTemplate keeps what scheduling reads of the exemplar, not its priority or identity",
          "[headroom_writer]") {
  const json pod_template = HeadroomPodTemplate(Shape4(), "headroom", Replica());
  CHECK(pod_template["metadata"]["name"] == "topofit-headroom-4gpu-nv-required");
  CHECK(pod_template["metadata"]["namespace"] == "headroom");
  const json& spec = pod_template["template"]["spec"];
  CHECK(spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "4");
  CHECK(spec["tolerations"][0]["key"] == "nvidia.com/gpu");
  CHECK_FALSE(spec.contains("priority"));
  CHECK_FALSE(spec.contains("priorityClassName"));
  const json& annotations = pod_template["template"]["metadata"]["annotations"];
  CHECK(annotations["topofit.io/min-link"] == "NV");
  CHECK_FALSE(annotations.contains("kubectl.kubernetes.io/last-applied-configuration"));
  CHECK(pod_template["template"]["metadata"]["labels"]["topofit.io/headroom-shape"] == "topofit-headroom-4gpu-nv-required");

  const json buffer = CapacityBufferObject(Shape4(), "headroom", "v1beta1", 3);
  CHECK(buffer["apiVersion"] == "autoscaling.x-k8s.io/v1beta1");
  CHECK(buffer["spec"]["podTemplateRef"]["name"] == "topofit-headroom-4gpu-nv-required");
  CHECK(buffer["spec"]["replicas"] == 3);
  CHECK(buffer["spec"]["provisioningStrategy"] == "buffer.x-k8s.io/active-capacity");
}

TEST_CASE("Discovery picks v1beta1 buffers, else v1alpha1, else placeholders, and does not guess on an error",
          "[headroom_writer]") {
  {
    Fixture f;
    f.server.ServeDiscovery("/apis/autoscaling.x-k8s.io/v1beta1", ResourceList("autoscaling.x-k8s.io/v1beta1", true));
    const absl::StatusOr<HeadroomApi> api = DiscoverHeadroomApi(*f.rest);
    REQUIRE(api.ok());
    CHECK(api->kind == HeadroomApi::Kind::kCapacityBuffers);
    CHECK(api->version == "v1beta1");
  }
  {
    Fixture f;  // CA 1.34: only v1alpha1; the group's v1beta1 lists other resources
    f.server.ServeDiscovery("/apis/autoscaling.x-k8s.io/v1beta1", ResourceList("autoscaling.x-k8s.io/v1beta1", false));
    f.server.ServeDiscovery("/apis/autoscaling.x-k8s.io/v1alpha1", ResourceList("autoscaling.x-k8s.io/v1alpha1", true));
    const absl::StatusOr<HeadroomApi> api = DiscoverHeadroomApi(*f.rest);
    REQUIRE(api.ok());
    CHECK(api->version == "v1alpha1");
  }
  {
    Fixture f;  // no CRD at all: 404 for both
    const absl::StatusOr<HeadroomApi> api = DiscoverHeadroomApi(*f.rest);
    REQUIRE(api.ok());
    CHECK(api->kind == HeadroomApi::Kind::kPlaceholders);
    CHECK_THAT(api->reason, Catch::Contains("placeholder Deployments") && Catch::Contains("topofit-headroom"));
  }
  {
    Fixture f;
    f.server.Script(403, StatusJson(403, "Forbidden", "discovery is forbidden"));
    const absl::StatusOr<HeadroomApi> api = DiscoverHeadroomApi(*f.rest);
    CHECK(absl::IsPermissionDenied(api.status()));
  }
}

TEST_CASE("The writer creates, resizes and deletes CapacityBuffers and their PodTemplates", "[headroom_writer]") {
  Fixture f;
  HeadroomWriter writer(*f.rest, {HeadroomApi::Kind::kCapacityBuffers, "v1beta1", ""}, "headroom");
  REQUIRE(writer.Apply({{Shape4(), {3, Replica()}}}).ok());
  const std::string name = "topofit-headroom-4gpu-nv-required";
  json buffer = f.server.StoredObject(std::string(kBuffers) + "/" + name);
  REQUIRE(buffer.is_object());
  CHECK(buffer["spec"]["replicas"] == 3);
  CHECK(f.server.StoredObject(std::string(kTemplates) + "/" + name).is_object());

  REQUIRE(writer.Apply({{Shape4(), {5, Replica()}}}).ok());
  CHECK(f.server.StoredObject(std::string(kBuffers) + "/" + name)["spec"]["replicas"] == 5);
  const size_t requests = f.server.requests().size();
  REQUIRE(writer.Apply({{Shape4(), {5, Replica()}}}).ok());
  CHECK(f.server.requests().size() == requests);  // nothing changed, nothing sent

  REQUIRE(writer.Apply({}).ok());
  CHECK(f.server.StoredObject(std::string(kBuffers) + "/" + name).is_null());
  CHECK(f.server.StoredObject(std::string(kTemplates) + "/" + name).is_null());
  CHECK(writer.written().empty());
}

TEST_CASE("A restarted writer adopts its buffers: resizes the wanted ones, deletes the rest, leaves others' alone",
          "[headroom_writer]") {
  Fixture f;
  {
    HeadroomWriter before(*f.rest, {HeadroomApi::Kind::kCapacityBuffers, "v1beta1", ""}, "headroom");
    REQUIRE(before.Apply({{Shape4(), {3, Replica()}}, {Shape1(), {2, Replica()}}}).ok());
  }
  json someone_elses = CapacityBufferObject(Shape1(), "headroom", "v1beta1", 7);
  someone_elses["metadata"]["name"] = "team-buffer";
  someone_elses["metadata"]["labels"] = json::object();
  f.server.PutStoredObject(std::string(kBuffers) + "/team-buffer", someone_elses);

  HeadroomWriter after(*f.rest, {HeadroomApi::Kind::kCapacityBuffers, "v1beta1", ""}, "headroom");
  REQUIRE(after.Apply({{Shape4(), {4, Replica()}}}).ok());
  CHECK(f.server.StoredObject(std::string(kBuffers) + "/topofit-headroom-4gpu-nv-required")["spec"]["replicas"] == 4);
  CHECK(f.server.StoredObject(std::string(kBuffers) + "/topofit-headroom-1gpu").is_null());
  CHECK(f.server.StoredObject(std::string(kBuffers) + "/team-buffer")["spec"]["replicas"] == 7);
  int posts = 0;
  for (const auto& request : f.server.requests()) posts += request.method == "POST";
  CHECK(posts == 4);  // the first writer's two templates and two buffers: the second created nothing
}

TEST_CASE("Without buffers the writer keeps placeholder Deployments of a negative-priority class", "[headroom_writer]") {
  Fixture f;
  HeadroomWriter writer(*f.rest, {HeadroomApi::Kind::kPlaceholders, "", ""}, "headroom");
  REQUIRE(writer.Apply({{Shape4(), {2, Replica()}}}).ok());
  const json priority_class = f.server.StoredObject("/apis/scheduling.k8s.io/v1/priorityclasses/topofit-headroom");
  REQUIRE(priority_class.is_object());
  CHECK(priority_class["value"] == -1);
  CHECK(priority_class["preemptionPolicy"] == "Never");
  const json deployment = f.server.StoredObject(std::string(kDeployments) + "/topofit-headroom-4gpu-nv-required");
  REQUIRE(deployment.is_object());
  CHECK(deployment["spec"]["replicas"] == 2);
  const json& spec = deployment["spec"]["template"]["spec"];
  CHECK(spec["priorityClassName"] == "topofit-headroom");
  CHECK_FALSE(spec.contains("schedulerName"));
  CHECK(spec["containers"][0]["image"] == "registry.k8s.io/pause:3.10");
  CHECK(spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "4");
  CHECK(deployment["spec"]["selector"]["matchLabels"] == deployment["spec"]["template"]["metadata"]["labels"]);
  json pod = Replica();
  pod["spec"] = spec;
  CHECK(IsHeadroomPlaceholder(pod));
  CHECK_FALSE(IsHeadroomPlaceholder(Replica()));

  REQUIRE(writer.Apply({{Shape4(), {0, Replica()}}}).ok());
  CHECK(f.server.StoredObject(std::string(kDeployments) + "/topofit-headroom-4gpu-nv-required").is_null());
}

TEST_CASE("A failed write is returned, and the next Apply does what is left", "[headroom_writer]") {
  Fixture f;
  HeadroomWriter writer(*f.rest, {HeadroomApi::Kind::kCapacityBuffers, "v1beta1", ""}, "headroom");
  REQUIRE(writer.Apply({}).ok());  // adopted: nothing there
  f.server.Script(403, StatusJson(403, "Forbidden", "podtemplates is forbidden"));
  CHECK(absl::IsPermissionDenied(writer.Apply({{Shape4(), {3, Replica()}}})));
  CHECK(f.server.StoredObject(std::string(kBuffers) + "/topofit-headroom-4gpu-nv-required").is_null());
  REQUIRE(writer.Apply({{Shape4(), {3, Replica()}}}).ok());
  CHECK(f.server.StoredObject(std::string(kBuffers) + "/topofit-headroom-4gpu-nv-required")["spec"]["replicas"] == 3);
}

}  // namespace
}  // namespace topofit::kubeclient
