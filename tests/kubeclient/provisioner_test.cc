#include "kubeclient/provisioner.h"

#include <catch2/catch.hpp>
#include <spdlog/sinks/null_sink.h>

#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"

namespace topofit::kubeclient {
namespace {

using nlohmann::json;
using testing::Eventually;
using testing::FakeApiServer;
using testing::Resource;
using testing::StatusJson;

constexpr char kTemplatePath[] = "/api/v1/namespaces/ml/podtemplates/topofit-trainer";
constexpr char kRequestPath[] = "/apis/autoscaling.x-k8s.io/v1/namespaces/ml/provisioningrequests/topofit-trainer";

json PendingTrainer() {
  return json::parse(R"({
    "metadata": {"name": "trainer", "namespace": "ml", "uid": "uid-trainer",
                 "annotations": {"topofit.io/min-link": "NV", "topofit.io/topology-policy": "required"}},
    "spec": {"schedulerName": "topofit",
             "containers": [{"name": "main", "image": "trainer:1",
                             "resources": {"limits": {"nvidia.com/gpu": "8"}}}]},
    "status": {"phase": "Pending"}
  })");
}

struct Fixture {
  Fixture()
      : certs(topofit::testing::TestCerts::Create().value()),
        server(*certs),
        rest(testing::DirectClientFor(server, *certs)) {}
  int Posts() const {
    int posts = 0;
    for (const auto& request : server.requests()) posts += request.method == "POST" ? 1 : 0;
    return posts;
  }
  std::unique_ptr<topofit::testing::TestCerts> certs;
  FakeApiServer server;
  std::unique_ptr<RestClient> rest;
  KubeApi api{*rest};
  spdlog::logger log{"test", std::make_shared<spdlog::sinks::null_sink_mt>()};
};

const scheduler::PodRef kTrainer{"uid-trainer", "ml", "trainer"};

TEST_CASE("A refused pod gets one ProvisioningRequest, consumes it, and it goes when withdrawn", "[provisioner]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingTrainer());
  Provisioner provisioner(f.api, f.log);
  provisioner.RequestFor(kTrainer, {{"dgx-2", "dgx-1"}, {}});
  REQUIRE(Eventually([&] { return provisioner.stats().requested == 1; }));

  const json pod_template = f.server.StoredObject(kTemplatePath);
  REQUIRE(pod_template.is_object());
  CHECK(pod_template["template"]["metadata"]["annotations"]["topofit.io/stands-for-pod-uid"] == "uid-trainer");
  CHECK(pod_template["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                    ["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == json({"dgx-1", "dgx-2"}));
  const json request = f.server.StoredObject(kRequestPath);
  REQUIRE(request.is_object());
  CHECK(request["spec"]["provisioningClassName"] == "best-effort-atomic-scale-up.autoscaling.x-k8s.io");
  CHECK(request["spec"]["podSets"][0]["podTemplateRef"]["name"] == "topofit-trainer");
  CHECK(f.server.Object(Resource::kPods, "ml", "trainer")["metadata"]["annotations"]
                       ["autoscaling.x-k8s.io/consume-provisioning-request"] == "topofit-trainer");

  // Asked again while the request stands: nothing new is written.
  const int posts = f.Posts();
  provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  provisioner.Withdraw(kTrainer);
  REQUIRE(Eventually([&] { return provisioner.stats().withdrawn == 1; }));
  CHECK(f.Posts() == posts);
  CHECK(f.server.StoredObject(kTemplatePath).is_null());
  CHECK(f.server.StoredObject(kRequestPath).is_null());

  SECTION("withdrawing what is not there is done too (a restart forgot it, or the pod never had one)") {
    provisioner.Withdraw(kTrainer);
    REQUIRE(Eventually([&] { return provisioner.stats().withdrawn == 2; }));
    CHECK(provisioner.stats().failed == 0);
  }
}

TEST_CASE("Nothing is requested for a pod that is gone, replaced or already bound", "[provisioner]") {
  Fixture f;
  Provisioner provisioner(f.api, f.log);
  SECTION("gone") {
    provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  }
  SECTION("replaced: same name, another uid") {
    json pod = PendingTrainer();
    pod["metadata"]["uid"] = "uid-trainer-2";
    f.server.Upsert(Resource::kPods, pod);
    provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  }
  SECTION("bound meanwhile") {
    json pod = PendingTrainer();
    pod["spec"]["nodeName"] = "dgx-3";
    f.server.Upsert(Resource::kPods, pod);
    provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  }
  REQUIRE(Eventually([&] { return provisioner.stats().skipped == 1; }));
  CHECK(f.Posts() == 0);
  CHECK(f.server.StoredObject(kRequestPath).is_null());
}

TEST_CASE("A failed creation is forgotten, so the pod's next refusal asks again", "[provisioner]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingTrainer());
  Provisioner provisioner(f.api, f.log);
  f.server.Script(403, StatusJson(403, "Forbidden", "pods \"trainer\" is forbidden: RBAC says no"));
  provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  REQUIRE(Eventually([&] { return provisioner.stats().failed == 1; }));
  CHECK(f.server.StoredObject(kRequestPath).is_null());
  provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  REQUIRE(Eventually([&] { return provisioner.stats().requested == 1; }));
  CHECK(f.server.StoredObject(kRequestPath).is_object());
}

TEST_CASE("Stop drops what is queued and ignores later calls", "[provisioner]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingTrainer());
  Provisioner provisioner(f.api, f.log);
  provisioner.Stop();
  provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  provisioner.Stop();  // idempotent
  CHECK(f.server.requests().empty());
}

}  // namespace
}  // namespace topofit::kubeclient
