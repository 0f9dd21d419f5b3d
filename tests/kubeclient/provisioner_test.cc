#include "kubeclient/provisioner.h"

#include <catch2/catch.hpp>
#include <spdlog/sinks/null_sink.h>

#include "tests/history/memory_recorder.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/fake_clock.h"

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
  // GETs of `path` so far.
  int Gets(const std::string& path) const {
    int gets = 0;
    for (const auto& request : server.requests()) gets += request.method == "GET" && request.target == path;
    return gets;
  }
  std::unique_ptr<topofit::testing::TestCerts> certs;
  FakeApiServer server;
  std::unique_ptr<RestClient> rest;
  KubeApi api{*rest};
  spdlog::logger log{"test", std::make_shared<spdlog::sinks::null_sink_mt>()};
  server::FakeClock clock;
};

const scheduler::PodRef kTrainer{"uid-trainer", "ml", "trainer"};

TEST_CASE("A refused pod gets one ProvisioningRequest, consumes it, and it goes when withdrawn", "[provisioner]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingTrainer());
  Provisioner provisioner(f.api, f.log, f.clock);
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

// cluster-autoscaler's conditions on the stored request, as its ProvisioningRequest processor writes them.
void SetConditions(Fixture& f, const std::string& request_path, const json& conditions) {
  json request = f.server.StoredObject(request_path);
  request["status"] = {{"conditions", conditions}};
  f.server.PutStoredObject(request_path, request);
}

TEST_CASE("A pod asked for again reads what cluster-autoscaler says of its request, recorded once per change",
          "[provisioner]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingTrainer());
  history::testing::MemoryRecorder recorder;
  Provisioner provisioner(f.api, f.log, f.clock);
  provisioner.RecordDecisionsTo(&recorder);
  provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  REQUIRE(Eventually([&] { return provisioner.stats().requested == 1; }));
  const auto gets_of_request = [&f] { return f.Gets(kRequestPath); };

  SetConditions(f, kRequestPath, {{{"type", "Accepted"}, {"status", "True"}},
                    {{"type", "Provisioned"}, {"status", "False"}, {"reason", "CapacityIsNotFound"},
                     {"message", "Capacity is not found, CA will try to find it later."}}});
  provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});  // within a minute of the request: not read
  f.clock.Advance(kStatusCheckInterval);
  provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  REQUIRE(Eventually([&] { return recorder.records().size() == 1; }));
  CHECK(gets_of_request() == 1);
  const history::Record not_found = recorder.records()[0];
  CHECK(not_found.kind == history::Kind::kCapacityStatus);
  CHECK(not_found.reason == history::Reason::kCapacityNotFound);
  CHECK(not_found.correlation_id == "uid-trainer");
  CHECK(not_found.pods == std::vector<history::PodSubject>{{"uid-trainer", "ml/trainer"}});
  CHECK(not_found.provisioning_request == "ml/topofit-trainer");

  // The same answer a minute later is not news; booked capacity that expired is.
  f.clock.Advance(kStatusCheckInterval);
  provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  REQUIRE(Eventually([&] { return gets_of_request() == 2; }));
  SetConditions(f, kRequestPath,
                {{{"type", "Provisioned"}, {"status", "True"}}, {{"type", "BookingExpired"}, {"status", "True"}}});
  f.clock.Advance(kStatusCheckInterval);
  provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  REQUIRE(Eventually([&] { return recorder.records().size() == 2; }));
  CHECK(recorder.records()[1].reason == history::Reason::kCapacityBookingExpired);
  CHECK(gets_of_request() == 3);

  SECTION("a withdrawn pod's request is read no more") {
    provisioner.Withdraw(kTrainer);
    REQUIRE(Eventually([&] { return provisioner.stats().withdrawn == 1; }));
    f.clock.Advance(kStatusCheckInterval);
    provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});  // asks anew: creates, does not read
    REQUIRE(Eventually([&] { return provisioner.stats().requested == 2; }));
    CHECK(gets_of_request() == 3);
  }
}

TEST_CASE("Nothing is requested for a pod that is gone, replaced or already bound", "[provisioner]") {
  Fixture f;
  Provisioner provisioner(f.api, f.log, f.clock);
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
  Provisioner provisioner(f.api, f.log, f.clock);
  f.server.Script(403, StatusJson(403, "Forbidden", "pods \"trainer\" is forbidden: RBAC says no"));
  provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  REQUIRE(Eventually([&] { return provisioner.stats().failed == 1; }));
  CHECK(f.server.StoredObject(kRequestPath).is_null());
  provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  REQUIRE(Eventually([&] { return provisioner.stats().requested == 1; }));
  CHECK(f.server.StoredObject(kRequestPath).is_object());
}

json PendingMember(int i) {
  json pod = PendingTrainer();
  pod["metadata"]["name"] = "train-" + std::to_string(i);
  pod["metadata"]["uid"] = "uid-train-" + std::to_string(i);
  pod["metadata"]["annotations"] = {{"topofit.io/gang", "train"}, {"topofit.io/gang-size", "3"}};
  return pod;
}

scheduler::GangCapacity GangAsk(int member) {
  scheduler::GangCapacity capacity;
  capacity.gang = {"topofit:ml/train", "ml"};
  capacity.member = {"uid-train-" + std::to_string(member), "ml", "train-" + std::to_string(member)};
  capacity.count = 3;
  capacity.domain.match_expressions.push_back({"nvidia.com/gpu.clique", kube::NodeSelectorOperator::kIn, {"uuid.a"}});
  return capacity;
}

TEST_CASE("A gang gets one ProvisioningRequest, every member that asks consumes it, and it goes when withdrawn",
          "[provisioner]") {
  Fixture f;
  for (int i = 0; i < 3; ++i) f.server.Upsert(Resource::kPods, PendingMember(i));
  Provisioner provisioner(f.api, f.log, f.clock);
  const std::string name = GangProvisioningObjectName("topofit:ml/train");
  const std::string request_path = "/apis/autoscaling.x-k8s.io/v1/namespaces/ml/provisioningrequests/" + name;
  const std::string template_path = "/api/v1/namespaces/ml/podtemplates/" + name;
  provisioner.RequestForGang(GangAsk(0));
  provisioner.RequestForGang(GangAsk(0));  // the same member again: nothing more
  provisioner.RequestForGang(GangAsk(1));
  REQUIRE(Eventually([&] { return provisioner.stats().gang_consumers == 2; }));
  CHECK(provisioner.stats().gang_requested == 1);
  const json request = f.server.StoredObject(request_path);
  REQUIRE(request.is_object());
  CHECK(request["spec"]["podSets"][0]["count"] == 3);
  CHECK(f.server.StoredObject(template_path)["template"]["spec"]["affinity"]["nodeAffinity"]
                                             ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
                                             ["matchExpressions"][0]["values"] == json({"uuid.a"}));
  for (const char* member : {"train-0", "train-1"}) {
    CHECK(f.server.Object(Resource::kPods, "ml", member)["metadata"]["annotations"]
                         ["autoscaling.x-k8s.io/consume-provisioning-request"] == name);
  }
  CHECK_FALSE(f.server.Object(Resource::kPods, "ml", "train-2")["metadata"]["annotations"].contains(
      "autoscaling.x-k8s.io/consume-provisioning-request"));

  provisioner.WithdrawGang({"topofit:ml/train", "ml"});
  REQUIRE(Eventually([&] { return provisioner.stats().withdrawn == 1; }));
  CHECK(f.server.StoredObject(request_path).is_null());
  CHECK(f.server.StoredObject(template_path).is_null());
  // withdrawn: the gang's next refusal asks again
  provisioner.RequestForGang(GangAsk(2));
  REQUIRE(Eventually([&] { return provisioner.stats().gang_requested == 2; }));
  CHECK(f.server.StoredObject(request_path).is_object());
}

// Member `i` of the gang, its GPUs from the claim made for it from template "four-gpus".
json PendingClaimMember(int i) {
  json pod = PendingMember(i);
  pod["spec"]["containers"][0]["resources"] = {{"claims", {{{"name", "gpus"}}}}};
  pod["spec"]["resourceClaims"] = {{{"name", "gpus"}, {"resourceClaimTemplateName", "four-gpus"}}};
  pod["status"]["resourceClaimStatuses"] = {{{"name", "gpus"}, {"resourceClaimName", "train-" + std::to_string(i) + "-gpus"}}};
  return pod;
}

// Member 0's ask for a gang of claim pods, naming `named` (a pod set each).
scheduler::GangCapacity ClaimGangAsk(std::initializer_list<int> named) {
  scheduler::GangCapacity ask = GangAsk(0);
  ask.count = static_cast<int>(named.size());
  for (int member : named) ask.claim_members.push_back(GangAsk(member).member);
  return ask;
}

// A gang of claim pods is asked for with a pod set per member, each template naming that member's claim (the
// fake API server refuses a template whose container names a claim its spec lacks); every template goes
// with the request.
TEST_CASE("A gang of claim pods gets one request of a pod set per member, each naming its own claim",
          "[provisioner][dra]") {
  Fixture f;
  for (int i = 0; i < 3; ++i) f.server.Upsert(Resource::kPods, PendingClaimMember(i));
  Provisioner provisioner(f.api, f.log, f.clock);
  provisioner.RequestForGang(ClaimGangAsk({1, 2}));
  REQUIRE(Eventually([&] { return provisioner.stats().gang_consumers == 1; }));
  CHECK(provisioner.stats().gang_requested == 1);
  const std::string name = GangProvisioningObjectName("topofit:ml/train");
  const json request = f.server.StoredObject("/apis/autoscaling.x-k8s.io/v1/namespaces/ml/provisioningrequests/" + name);
  REQUIRE(request.is_object());
  REQUIRE(request["spec"]["podSets"].size() == 2);
  for (int i = 0; i < 2; ++i) {
    const std::string member_template = GangMemberTemplateName("topofit:ml/train", i);
    CHECK(request["spec"]["podSets"][i] == json({{"count", 1}, {"podTemplateRef", {{"name", member_template}}}}));
    const json stored = f.server.StoredObject("/api/v1/namespaces/ml/podtemplates/" + member_template);
    REQUIRE(stored.is_object());
    const std::string member = "train-" + std::to_string(i + 1);
    CHECK(stored["metadata"]["ownerReferences"][0]["name"] == member);
    CHECK(stored["template"]["spec"]["resourceClaims"] ==
          json::array({{{"name", "gpus"}, {"resourceClaimName", member + "-gpus"}}}));
  }
  CHECK(f.server.Object(Resource::kPods, "ml", "train-0")["metadata"]["annotations"]
                       ["autoscaling.x-k8s.io/consume-provisioning-request"] == name);

  provisioner.WithdrawGang({"topofit:ml/train", "ml"});
  REQUIRE(Eventually([&] { return provisioner.stats().withdrawn == 1; }));
  for (int i = 0; i < 2; ++i) {
    CHECK(f.server.StoredObject("/api/v1/namespaces/ml/podtemplates/" + GangMemberTemplateName("topofit:ml/train", i))
              .is_null());
  }
}

// The member whose refusal asks is one of the members named, as the extender asks: it is read once.
TEST_CASE("A claim gang's asking member is read once, also when it is one of the members named", "[provisioner][dra]") {
  Fixture f;
  for (int i = 0; i < 3; ++i) f.server.Upsert(Resource::kPods, PendingClaimMember(i));
  Provisioner provisioner(f.api, f.log, f.clock);
  provisioner.RequestForGang(ClaimGangAsk({0, 1}));
  REQUIRE(Eventually([&] { return provisioner.stats().gang_consumers == 1; }));
  CHECK(provisioner.stats().gang_requested == 1);
  CHECK(f.Gets("/api/v1/namespaces/ml/pods/train-0") == 1);
  CHECK(f.Gets("/api/v1/namespaces/ml/pods/train-1") == 1);
  const json first =
      f.server.StoredObject("/api/v1/namespaces/ml/podtemplates/" + GangMemberTemplateName("topofit:ml/train", 0));
  REQUIRE(first.is_object());
  CHECK(first["template"]["spec"]["resourceClaims"] ==
        json::array({{{"name", "gpus"}, {"resourceClaimName", "train-0-gpus"}}}));
}

// A member named gone before its template was made: nothing is asked, and the gang's next refusal asks again.
TEST_CASE("A gang of claim pods whose named member is gone asks nothing", "[provisioner][dra]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingClaimMember(0));
  Provisioner provisioner(f.api, f.log, f.clock);
  provisioner.RequestForGang(ClaimGangAsk({0, 1}));
  REQUIRE(Eventually([&] { return provisioner.stats().failed == 1; }));
  CHECK(provisioner.stats().gang_requested == 0);
  const std::string name = GangProvisioningObjectName("topofit:ml/train");
  CHECK(f.server.StoredObject("/apis/autoscaling.x-k8s.io/v1/namespaces/ml/provisioningrequests/" + name).is_null());
}

TEST_CASE("A member that joins after the request's owner took it away asks again, and owns the new one", "[provisioner]") {
  Fixture f;
  for (int i = 0; i < 3; ++i) f.server.Upsert(Resource::kPods, PendingMember(i));
  Provisioner provisioner(f.api, f.log, f.clock);
  const std::string name = GangProvisioningObjectName("topofit:ml/train");
  const std::string request_path = "/apis/autoscaling.x-k8s.io/v1/namespaces/ml/provisioningrequests/" + name;
  provisioner.RequestForGang(GangAsk(0));
  provisioner.RequestForGang(GangAsk(1));
  REQUIRE(Eventually([&] { return provisioner.stats().gang_consumers == 2; }));
  CHECK(provisioner.stats().gang_requested == 1);
  // train-0 is deleted (its Job replaces it): the garbage collector deletes what it owns
  f.server.Delete(Resource::kPods, "ml", "train-0");
  REQUIRE(f.api.DeleteProvisioningRequest("ml", name).ok());
  REQUIRE(f.api.DeletePodTemplate("ml", name).ok());
  provisioner.RequestForGang(GangAsk(2));
  REQUIRE(Eventually([&] { return provisioner.stats().gang_requested == 2; }));
  const json request = f.server.StoredObject(request_path);
  REQUIRE(request.is_object());
  CHECK(request["metadata"]["ownerReferences"][0]["name"] == "train-2");
  REQUIRE(Eventually([&] { return provisioner.stats().gang_consumers == 3; }));
}

TEST_CASE("A gang's members asking again read what cluster-autoscaler says of its request, once per change",
          "[provisioner]") {
  Fixture f;
  for (int i = 0; i < 3; ++i) f.server.Upsert(Resource::kPods, PendingMember(i));
  history::testing::MemoryRecorder recorder;
  Provisioner provisioner(f.api, f.log, f.clock);
  provisioner.RecordDecisionsTo(&recorder);
  const std::string name = GangProvisioningObjectName("topofit:ml/train");
  const std::string request_path = "/apis/autoscaling.x-k8s.io/v1/namespaces/ml/provisioningrequests/" + name;
  const auto gets_of_request = [&] { return f.Gets(request_path); };
  provisioner.RequestForGang(GangAsk(0));
  provisioner.RequestForGang(GangAsk(1));
  REQUIRE(Eventually([&] { return provisioner.stats().gang_consumers == 2; }));
  const int gets_after_asking = gets_of_request();

  SetConditions(f, request_path,
                {{{"type", "Provisioned"}, {"status", "False"}, {"reason", "CapacityIsNotFound"},
                  {"message", "Capacity is not found, CA will try to find it later."}}});
  provisioner.RequestForGang(GangAsk(1));  // within a minute of the request: not read
  f.clock.Advance(kStatusCheckInterval);
  provisioner.RequestForGang(GangAsk(1));
  provisioner.RequestForGang(GangAsk(0));  // the same minute, another member: read once per gang
  REQUIRE(Eventually([&] { return recorder.records().size() == 1; }));
  CHECK(gets_of_request() == gets_after_asking + 1);
  const history::Record not_found = recorder.records()[0];
  CHECK(not_found.kind == history::Kind::kCapacityStatus);
  CHECK(not_found.reason == history::Reason::kCapacityNotFound);
  CHECK(not_found.pods == std::vector<history::PodSubject>{{"uid-train-1", "ml/train-1"}});
  CHECK(not_found.provisioning_request == "ml/" + name);

  // The same answer a minute later is not news; a failure is, on the chain of whichever member asked.
  f.clock.Advance(kStatusCheckInterval);
  provisioner.RequestForGang(GangAsk(0));
  REQUIRE(Eventually([&] { return gets_of_request() == gets_after_asking + 2; }));
  SetConditions(f, request_path,
                {{{"type", "Failed"}, {"status", "True"}, {"reason", "Failed"}, {"message", "quota"}}});
  f.clock.Advance(kStatusCheckInterval);
  provisioner.RequestForGang(GangAsk(0));
  REQUIRE(Eventually([&] { return recorder.records().size() == 2; }));
  CHECK(recorder.records()[1].reason == history::Reason::kCapacityFailed);
  CHECK(recorder.records()[1].pods == std::vector<history::PodSubject>{{"uid-train-0", "ml/train-0"}});

  SECTION("a withdrawn gang's request is read no more") {
    provisioner.WithdrawGang({"topofit:ml/train", "ml"});
    REQUIRE(Eventually([&] { return provisioner.stats().withdrawn == 1; }));
    const int gets = gets_of_request();
    f.clock.Advance(kStatusCheckInterval);
    provisioner.RequestForGang(GangAsk(1));  // asks anew: creates, does not read
    REQUIRE(Eventually([&] { return provisioner.stats().gang_requested == 2; }));
    CHECK(gets_of_request() == gets);
  }
}

TEST_CASE("A gang still asking 15 minutes after its request was made gets it replaced", "[provisioner]") {
  Fixture f;
  for (int i = 0; i < 3; ++i) f.server.Upsert(Resource::kPods, PendingMember(i));
  Provisioner provisioner(f.api, f.log, f.clock);
  const std::string request_path = "/apis/autoscaling.x-k8s.io/v1/namespaces/ml/provisioningrequests/" +
                                   GangProvisioningObjectName("topofit:ml/train");
  provisioner.RequestForGang(GangAsk(0));
  REQUIRE(Eventually([&] { return provisioner.stats().gang_requested == 1; }));
  f.clock.Advance(kGangRequestLifetime - absl::Seconds(1));
  provisioner.RequestForGang(GangAsk(1));
  REQUIRE(Eventually([&] { return provisioner.stats().gang_consumers == 2; }));
  CHECK(provisioner.stats().withdrawn == 0);
  // the member that asked last is the new request's owner; the old one is deleted first
  f.clock.Advance(absl::Seconds(1));
  provisioner.RequestForGang(GangAsk(1));
  REQUIRE(Eventually([&] { return provisioner.stats().gang_requested == 2; }));
  CHECK(provisioner.stats().withdrawn == 1);
  const json request = f.server.StoredObject(request_path);
  REQUIRE(request.is_object());
  CHECK(request["metadata"]["ownerReferences"][0]["name"] == "train-1");
}

TEST_CASE("A gang whose asking member is gone asks nothing, and its next member asks again", "[provisioner]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingMember(1));
  Provisioner provisioner(f.api, f.log, f.clock);
  provisioner.RequestForGang(GangAsk(0));  // train-0 is not there
  REQUIRE(Eventually([&] { return provisioner.stats().skipped == 1; }));
  CHECK(f.Posts() == 0);
  provisioner.RequestForGang(GangAsk(1));
  REQUIRE(Eventually([&] { return provisioner.stats().gang_requested == 1; }));
}

TEST_CASE("Stop drops what is queued and ignores later calls", "[provisioner]") {
  Fixture f;
  f.server.Upsert(Resource::kPods, PendingTrainer());
  Provisioner provisioner(f.api, f.log, f.clock);
  provisioner.Stop();
  provisioner.RequestFor(kTrainer, {{"dgx-1"}, {}});
  provisioner.Stop();  // idempotent
  CHECK(f.server.requests().empty());
}

}  // namespace
}  // namespace topofit::kubeclient
