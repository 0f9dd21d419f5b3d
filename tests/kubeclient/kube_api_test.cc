#include "kubeclient/kube_api.h"

#include <catch2/catch.hpp>
#include <spdlog/sinks/null_sink.h>

#include "codec/kube_json.h"
#include "ledger/ledger.h"
#include "scheduler/extender.h"
#include "scheduler/gpu_state.h"
#include "tests/kube/builders.h"
#include "tests/kube/status_matchers.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/fake_clock.h"

namespace topofit::kubeclient {
namespace {

using nlohmann::json;
using testing::DirectClientFor;
using testing::FakeApiServer;
using testing::StatusJson;

// A pod as the API server returns it from GET (trimmed, but every field in its real place and type).
constexpr char kPodJson[] = R"({
  "kind": "Pod",
  "apiVersion": "v1",
  "metadata": {
    "name": "train-0",
    "namespace": "ml",
    "uid": "6f1d2c3b-0000-4000-8000-000000000001",
    "resourceVersion": "4711",
    "creationTimestamp": "2024-05-01T12:00:00Z",
    "annotations": {"topofit.io/min-link": "NV"}
  },
  "spec": {
    "schedulerName": "topofit-scheduler",
    "containers": [{
      "name": "main",
      "image": "trainer:1",
      "resources": {"limits": {"nvidia.com/gpu": "4"}, "requests": {"nvidia.com/gpu": "4", "cpu": "8"}}
    }]
  },
  "status": {"phase": "Pending", "qosClass": "Burstable"}
})";

struct Fixture {
  Fixture() : certs(topofit::testing::TestCerts::Create().value()), server(*certs) {
    rest = DirectClientFor(server, *certs);
  }
  std::unique_ptr<topofit::testing::TestCerts> certs;
  FakeApiServer server;
  std::unique_ptr<RestClient> rest;
};

TEST_CASE("GetPod: GET the pod and decode it", "[kube_api]") {
  Fixture f;
  KubeApi api(*f.rest);
  f.server.Script(200, kPodJson);
  const absl::StatusOr<kube::Pod> pod = api.GetPod("ml", "train-0");
  REQUIRE_OK(pod);
  CHECK(pod->metadata.uid == "6f1d2c3b-0000-4000-8000-000000000001");
  CHECK(pod->metadata.annotations.at("topofit.io/min-link") == "NV");
  CHECK(pod->spec.containers.at(0).resources.requests.at("nvidia.com/gpu") == 4000);
  CHECK(pod->status.phase == "Pending");

  const auto requests = f.server.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].method == "GET");
  CHECK(requests[0].target == "/api/v1/namespaces/ml/pods/train-0");
  CHECK(requests[0].Header("Accept") == "application/json");
  CHECK(requests[0].Header("Authorization") == "Bearer test-token");
  CHECK(requests[0].body.empty());
}

TEST_CASE("GetPod: a missing pod is NotFound with the server's message", "[kube_api]") {
  Fixture f;
  KubeApi api(*f.rest);
  f.server.Script(404, StatusJson(404, "NotFound", "pods \"gone\" not found"));
  CHECK_STATUS(api.GetPod("ml", "gone"), absl::StatusCode::kNotFound, "pods \"gone\" not found");
}

TEST_CASE("WorkloadGangMinCount: GET the pod's PodGroup and read gang.minCount", "[kube_api]") {
  Fixture f;
  KubeApi api(*f.rest);
  const kube::Pod pod = kube::testing::MakePod().name("w-0").namespaceName("ml").schedulingGroup("train-workers");
  f.server.Script(200, R"({"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                          "metadata": {"name": "train-workers", "namespace": "ml"},
                          "spec": {"schedulingPolicy": {"gang": {"minCount": 8}}}})");
  const absl::StatusOr<std::optional<int>> count = api.WorkloadGangMinCount(pod);
  REQUIRE_OK(count);
  CHECK(*count == 8);
  REQUIRE(f.server.requests().size() == 1);
  CHECK(f.server.requests()[0].method == "GET");
  CHECK(f.server.requests()[0].target == "/apis/scheduling.k8s.io/v1alpha2/namespaces/ml/podgroups/train-workers");

  f.server.Script(404, StatusJson(404, "NotFound", "podgroups.scheduling.k8s.io \"train-workers\" not found"));
  CHECK_STATUS(api.WorkloadGangMinCount(pod), absl::StatusCode::kNotFound, "not found");
  CHECK_STATUS(api.WorkloadGangMinCount(kube::testing::MakePod()), absl::StatusCode::kInvalidArgument,
               "names no PodGroup or Workload");
  // a name from the pod cannot reach another path
  f.server.Script(404, StatusJson(404, "NotFound", "not found"));
  (void)api.WorkloadGangMinCount(kube::testing::MakePod().namespaceName("ml").schedulingGroup("../../secrets/x"));
  CHECK(f.server.requests().back().target ==
        "/apis/scheduling.k8s.io/v1alpha2/namespaces/ml/podgroups/..%2F..%2Fsecrets%2Fx");
}

TEST_CASE("GetPod: names are escaped into one path segment", "[kube_api]") {
  Fixture f;
  KubeApi api(*f.rest);
  (void)api.GetPod("ml", "../nodes/n1");
  CHECK(f.server.requests().at(0).target == "/api/v1/namespaces/ml/pods/..%2Fnodes%2Fn1");
}

TEST_CASE("AnnotatePod: a JSON merge patch of one annotation", "[kube_api]") {
  Fixture f;
  KubeApi api(*f.rest);
  f.server.Script(200, kPodJson);  // PATCH returns the patched pod
  REQUIRE_OK(api.AnnotatePod("ml", "train-0", "topofit.io/gpu-ids", "0,1,2,3"));

  const auto requests = f.server.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].method == "PATCH");
  CHECK(requests[0].target == "/api/v1/namespaces/ml/pods/train-0");
  CHECK(requests[0].Header("Content-Type") == "application/merge-patch+json");
  CHECK(json::parse(requests[0].body) == json::parse(R"({"metadata":{"annotations":{"topofit.io/gpu-ids":"0,1,2,3"}}})"));
}

TEST_CASE("RemovePodAnnotation: a JSON merge patch setting the one annotation to null", "[kube_api]") {
  Fixture f;
  KubeApi api(*f.rest);
  f.server.Script(200, kPodJson);
  REQUIRE_OK(api.RemovePodAnnotation("ml", "train-0", "cluster-autoscaler.kubernetes.io/safe-to-evict"));

  const auto requests = f.server.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].method == "PATCH");
  CHECK(requests[0].target == "/api/v1/namespaces/ml/pods/train-0");
  CHECK(requests[0].Header("Content-Type") == "application/merge-patch+json");
  // RFC 7386: null removes the key and leaves every other annotation as it is.
  CHECK(json::parse(requests[0].body) ==
        json::parse(R"({"metadata":{"annotations":{"cluster-autoscaler.kubernetes.io/safe-to-evict":null}}})"));
}

TEST_CASE("MergePodAnnotations: several annotations in one merge patch, the patched resourceVersion back",
          "[kube_api]") {
  Fixture f;
  KubeApi api(*f.rest);
  f.server.Script(200, kPodJson);
  const absl::StatusOr<std::string> version =
      api.MergePodAnnotations("ml", "train-0", {{"topofit.io/a", "1"}, {"topofit.io/b", "2"}});
  REQUIRE_OK(version);
  CHECK(*version == "4711");
  const auto requests = f.server.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].method == "PATCH");
  CHECK(json::parse(requests[0].body) ==
        json::parse(R"({"metadata":{"annotations":{"topofit.io/a":"1","topofit.io/b":"2"}}})"));
}

TEST_CASE("BindPod: POST the Binding kube-scheduler's DefaultBinder sends", "[kube_api]") {
  Fixture f;
  KubeApi api(*f.rest);
  // The API server answers a successful binding with 201 and a Status.
  f.server.Script(201, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201})");
  REQUIRE_OK(api.BindPod("ml", "train-0", "6f1d2c3b-0000-4000-8000-000000000001", "gpu-node-7", {}));
  // With annotations, the Binding carries them in its metadata (the binding storage copies them onto the pod).
  f.server.Script(201, R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201})");
  REQUIRE_OK(api.BindPod("ml", "train-0", "6f1d2c3b-0000-4000-8000-000000000001", "gpu-node-7",
                         {{"topofit.io/gpu-ids", "0,1"}}));

  const auto requests = f.server.requests();
  REQUIRE(requests.size() == 2);
  CHECK(json::parse(requests[1].body)["metadata"]["annotations"] == json{{"topofit.io/gpu-ids", "0,1"}});
  CHECK(requests[0].method == "POST");
  CHECK(requests[0].target == "/api/v1/namespaces/ml/pods/train-0/binding");
  CHECK(requests[0].Header("Content-Type") == "application/json");
  // defaultbinder.Bind: Binding{ObjectMeta{Namespace, Name, UID}, Target: ObjectReference{Kind: "Node", Name}}.
  CHECK(json::parse(requests[0].body) == json::parse(R"({
    "apiVersion": "v1",
    "kind": "Binding",
    "metadata": {"name": "train-0", "namespace": "ml", "uid": "6f1d2c3b-0000-4000-8000-000000000001"},
    "target": {"kind": "Node", "name": "gpu-node-7"}
  })"));
}

TEST_CASE("BindPod: conflicts carry the API server's message", "[kube_api]") {
  Fixture f;
  KubeApi api(*f.rest);
  SECTION("already bound: 409 Conflict -> Aborted") {
    f.server.Script(409, StatusJson(409, "Conflict",
                                    "Operation cannot be fulfilled on pods/binding \"train-0\": pod train-0 is "
                                    "already assigned to node \"gpu-node-3\""));
    CHECK_STATUS(api.BindPod("ml", "train-0", "uid-1", "gpu-node-7", {}), absl::StatusCode::kAborted,
                 "already assigned to node \"gpu-node-3\"");
  }
  SECTION("409 AlreadyExists -> AlreadyExists") {
    f.server.Script(409, StatusJson(409, "AlreadyExists", "bindings \"train-0\" already exists"));
    CHECK_STATUS(api.BindPod("ml", "train-0", "uid-1", "gpu-node-7", {}), absl::StatusCode::kAlreadyExists,
                 "already exists");
  }
  CHECK(f.server.requests().size() == 1);  // conflicts are not retried
}

TEST_CASE("Pods in the fake API server's store: read, annotate, bind once", "[kube_api]") {
  Fixture f;
  KubeApi api(*f.rest);
  f.server.Upsert(testing::Resource::kPods, json::parse(kPodJson));
  REQUIRE_OK(api.AnnotatePod("ml", "train-0", "topofit.io/gpu-ids", "0,1,2,3"));
  const absl::StatusOr<kube::Pod> annotated = api.GetPod("ml", "train-0");
  REQUIRE_OK(annotated);
  CHECK(annotated->metadata.annotations == kube::StringMap{{"topofit.io/min-link", "NV"},
                                                           {"topofit.io/gpu-ids", "0,1,2,3"}});
  const std::string uid = annotated->metadata.uid;
  CHECK_STATUS(api.BindPod("ml", "train-0", "some-other-uid", "gpu-node-7", {}), absl::StatusCode::kAborted,
               "Precondition failed");
  REQUIRE_OK(api.BindPod("ml", "train-0", uid, "gpu-node-7", {{"topofit.io/bound-at", "2026-12-01T09:00:00.000000Z"}}));
  const json bound = f.server.Object(testing::Resource::kPods, "ml", "train-0");
  CHECK(bound["spec"]["nodeName"] == "gpu-node-7");
  // The Binding's annotations land on the pod beside those it had.
  CHECK(bound["metadata"]["annotations"] == json{{"topofit.io/min-link", "NV"},
                                                 {"topofit.io/gpu-ids", "0,1,2,3"},
                                                 {"topofit.io/bound-at", "2026-12-01T09:00:00.000000Z"}});
  // A second binder loses: the pod keeps its node.
  CHECK_STATUS(api.BindPod("ml", "train-0", uid, "gpu-node-8", {}), absl::StatusCode::kAborted,
               "pod train-0 is already assigned to node \"gpu-node-7\"");
  CHECK(f.server.Object(testing::Resource::kPods, "ml", "train-0")["spec"]["nodeName"] == "gpu-node-7");
  CHECK_STATUS(api.GetPod("ml", "gone"), absl::StatusCode::kNotFound, "pods \"gone\" not found");
}

TEST_CASE("The extender's bind through KubeApi: a 409 from the API server is the bind's error and frees the GPUs",
          "[kube_api]") {
  Fixture f;
  KubeApi api(*f.rest);
  server::FakeClock clock;
  server::MetricsRegistry registry;
  std::unique_ptr<scheduler::GpuState> state = scheduler::NewInMemoryGpuState();
  std::unique_ptr<ledger::Ledger> ledger = ledger::NewInMemoryLedger(clock);
  scheduler::ExtenderMetrics metrics = scheduler::ExtenderMetrics::Create(registry);
  spdlog::logger log{"test", std::make_shared<spdlog::sinks::null_sink_mt>()};
  scheduler::Extender extender(*state, *ledger, api, metrics, log, clock);
  REQUIRE_OK(state->UpsertNode(*codec::NodeFromJson(testing::NodeJson("gpu-node-7"))));

  json pod = testing::PodJson("ml", "train-0", "", "topofit");  // one GPU, topofit's profile
  pod["metadata"]["uid"] = "uid-train-0";
  f.server.Upsert(testing::Resource::kPods, pod);
  const codec::ExtenderBindingArgs args{"train-0", "ml", "uid-train-0", "gpu-node-7"};

  SECTION("bound by someone else meanwhile") {
    pod["spec"]["nodeName"] = "gpu-node-3";
    f.server.Upsert(testing::Resource::kPods, pod);
    const absl::StatusOr<std::string> error = extender.Bind(args);
    REQUIRE_OK(error);
    CHECK_THAT(*error, Catch::Contains("pod train-0 is already assigned to node \"gpu-node-3\""));
    CHECK(state->Snapshot("gpu-node-7")->free().size() == 8);  // the claim is released
  }
  SECTION("unbound: annotated with its GPU, then bound") {
    CHECK(extender.Bind(args).value() == "");
    const kube::Pod bound = api.GetPod("ml", "train-0").value();
    CHECK(bound.spec.node_name == "gpu-node-7");
    CHECK(bound.metadata.annotations.at("topofit.io/gpu-ids").size() == 1);  // one GPU id
    CHECK(state->Snapshot("gpu-node-7")->free().size() == 7);
  }
}

TEST_CASE("ProvisioningRequests: create both (idempotently), read the condition, delete both", "[kube_api]") {
  Fixture f;
  KubeApi api(*f.rest);
  const json pod = json::parse(kPodJson);
  const absl::StatusOr<json> pod_template = PodTemplateForPod(pod, {"gpu-node-1"});
  const absl::StatusOr<json> request = ProvisioningRequestForPod(pod);
  REQUIRE_OK(pod_template);
  REQUIRE_OK(request);
  const std::string template_path = "/api/v1/namespaces/ml/podtemplates/topofit-train-0";
  const std::string request_path =
      "/apis/autoscaling.x-k8s.io/v1/namespaces/ml/provisioningrequests/topofit-train-0";

  REQUIRE_OK(api.CreatePodTemplate(*pod_template));
  REQUIRE_OK(api.CreateProvisioningRequest(*request));
  // Again, as after a restart: the server's 409 AlreadyExists counts as done.
  REQUIRE_OK(api.CreatePodTemplate(*pod_template));
  REQUIRE_OK(api.CreateProvisioningRequest(*request));

  std::vector<testing::RecordedRequest> requests = f.server.requests();
  REQUIRE(requests.size() == 4);
  CHECK(requests[0].method == "POST");
  CHECK(requests[0].target == "/api/v1/namespaces/ml/podtemplates");
  CHECK(json::parse(requests[0].body) == *pod_template);
  CHECK(requests[1].method == "POST");
  CHECK(requests[1].target == "/apis/autoscaling.x-k8s.io/v1/namespaces/ml/provisioningrequests");
  CHECK(json::parse(requests[1].body) == *request);
  CHECK(f.server.StoredObject(template_path)["template"] == (*pod_template)["template"]);

  absl::StatusOr<ProvisioningState> state = api.GetProvisioningState("ml", "topofit-train-0");
  REQUIRE_OK(state);
  CHECK_FALSE(state->provisioned);
  json provisioned = f.server.StoredObject(request_path);
  provisioned["status"]["conditions"] =
      json::parse(R"([{"type": "Provisioned", "status": "True", "message": "capacity ready"}])");
  f.server.PutStoredObject(request_path, provisioned);
  state = api.GetProvisioningState("ml", "topofit-train-0");
  REQUIRE_OK(state);
  CHECK(state->provisioned);
  CHECK(state->message == "capacity ready");

  REQUIRE_OK(api.DeleteProvisioningRequest("ml", "topofit-train-0"));
  REQUIRE_OK(api.DeletePodTemplate("ml", "topofit-train-0"));
  CHECK(f.server.StoredObject(template_path).is_null());
  CHECK(f.server.StoredObject(request_path).is_null());
  // Deleting what is gone is done too; reading it is NotFound.
  REQUIRE_OK(api.DeleteProvisioningRequest("ml", "topofit-train-0"));
  REQUIRE_OK(api.DeletePodTemplate("ml", "topofit-train-0"));
  CHECK_STATUS(api.GetProvisioningState("ml", "topofit-train-0"), absl::StatusCode::kNotFound, "not found");
  requests = f.server.requests();
  REQUIRE(requests.size() == 11);
  // 0-3 the creates, 4-5 the GETs, then the deletes.
  CHECK(requests[6].method == "DELETE");
  CHECK(requests[6].target == request_path);
  CHECK(requests[7].method == "DELETE");
  CHECK(requests[7].target == template_path);
}

TEST_CASE("ProvisioningRequests: a 409 Conflict on create is an error, not success", "[kube_api]") {
  Fixture f;
  KubeApi api(*f.rest);
  const absl::StatusOr<json> request = ProvisioningRequestForPod(json::parse(kPodJson));
  REQUIRE_OK(request);
  f.server.Script(409, StatusJson(409, "Conflict", "the object has been modified"));
  CHECK_STATUS(api.CreateProvisioningRequest(*request), absl::StatusCode::kAborted, "modified");
}

}  // namespace
}  // namespace topofit::kubeclient
