#include "kubeclient/headroom_reconciler.h"

#include <catch2/catch.hpp>
#include <spdlog/sinks/null_sink.h>

#include "absl/strings/str_cat.h"

#include "tests/history/memory_recorder.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"

namespace topofit::kubeclient {
namespace {

using nlohmann::json;
using testing::Eventually;
using testing::FakeApiServer;
using testing::Resource;

constexpr char kBuffer[] =
    "/apis/autoscaling.x-k8s.io/v1beta1/namespaces/topofit-system/capacitybuffers/topofit-headroom-4gpu-nv-required";
constexpr char kDeployment[] = "/apis/apps/v1/namespaces/topofit-system/deployments/topofit-headroom-4gpu-nv-required";

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

// A 4-GPU replica requiring NVLink; running when `node` is set.
json Replica(const std::string& name, const std::string& node = "") {
  json pod = testing::PodJson("serving", name, node, "topofit");
  pod["metadata"]["uid"] = absl::StrCat("uid-", name);
  pod["metadata"]["annotations"] = {{"topofit.io/min-link", "NV"}, {"topofit.io/topology-policy", "required"}};
  pod["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", "4"}}}, {"requests", {{"nvidia.com/gpu", "4"}}}};
  return pod;
}

struct Fixture {
  explicit Fixture(bool buffers_served) : certs(topofit::testing::TestCerts::Create().value()), server(*certs) {
    if (buffers_served) {
      server.ServeDiscovery("/apis/autoscaling.x-k8s.io/v1beta1",
                            {{"kind", "APIResourceList"},
                             {"groupVersion", "autoscaling.x-k8s.io/v1beta1"},
                             {"resources", json::array({{{"name", "capacitybuffers"}, {"namespaced", true}}})}});
    }
    rest = testing::DirectClientFor(server, *certs);
    watch_rest = testing::DirectClientFor(server, *certs);
  }
  // Starts the pod watch and the writer on the API discovery found.
  void Start() {
    api = DiscoverHeadroomApi(*rest).value();
    writer = std::make_unique<HeadroomWriter>(*rest, api, "topofit-system");
    decision::HeadroomConfig config;
    config.quantile = 0.95;
    config.window = absl::Minutes(30);
    config.shrink_after = absl::Minutes(10);
    reconciler = std::make_unique<HeadroomReconciler>(demand, *writer, config, registry, log, &recorder,
                                                      "capacity-buffers");
    watcher = std::make_unique<ListWatcher>(*watch_rest, "/api/v1/pods", ListWatchOptions{}, demand.Sink());
    watcher->Start();
    REQUIRE(watcher->WaitForSync(testing::kPatience));
  }
  bool LiveIs(int count) {
    return Eventually([&] {
      const auto live = demand.Live();
      int total = 0;
      for (const auto& [shape, n] : live) total += n;
      return total == count;
    });
  }

  std::unique_ptr<topofit::testing::TestCerts> certs;
  FakeApiServer server;
  std::unique_ptr<RestClient> rest, watch_rest;
  HeadroomApi api;
  HeadroomDemand demand;
  server::MetricsRegistry registry;
  spdlog::logger log{"test", std::make_shared<spdlog::sinks::null_sink_mt>()};
  history::testing::MemoryRecorder recorder;
  std::unique_ptr<HeadroomWriter> writer;
  std::unique_ptr<HeadroomReconciler> reconciler;
  std::unique_ptr<ListWatcher> watcher;
};

TEST_CASE("Demand counts live GPU pods by shape: not finished ones, deleted ones or topofit's placeholders",
          "[headroom_reconciler]") {
  Fixture f(true);
  f.server.Upsert(Resource::kPods, Replica("a", "n1"));
  f.server.Upsert(Resource::kPods, Replica("b"));
  json done = Replica("c", "n1");
  done["status"]["phase"] = "Succeeded";
  f.server.Upsert(Resource::kPods, done);
  json placeholder = Replica("placeholder");
  placeholder["spec"]["priorityClassName"] = "topofit-headroom";
  f.server.Upsert(Resource::kPods, placeholder);
  json cpu_only = testing::PodJson("web", "api");
  cpu_only["metadata"]["uid"] = "uid-api";
  cpu_only["spec"]["containers"][0]["resources"] = {{"requests", {{"cpu", "1"}}}};
  f.server.Upsert(Resource::kPods, cpu_only);
  f.Start();
  REQUIRE(f.LiveIs(2));
  const decision::HeadroomShape shape = f.demand.Live().begin()->first;
  CHECK(shape.gpus == 4);
  CHECK(shape.min_link == "NV");
  REQUIRE(f.demand.Exemplar(shape).has_value());
  CHECK((*f.demand.Exemplar(shape))["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "4");

  f.server.Delete(Resource::kPods, "serving", "a");
  CHECK(f.LiveIs(1));
  json finished = Replica("b");
  finished["status"]["phase"] = "Failed";
  f.server.Upsert(Resource::kPods, finished);
  CHECK(f.LiveIs(0));
}

TEST_CASE("End to end: a burst makes a CapacityBuffer of its shape, which goes once the bursts stop",
          "[headroom_reconciler]") {
  Fixture f(true);
  f.server.Upsert(Resource::kPods, Replica("r0", "n1"));
  f.Start();
  REQUIRE(f.LiveIs(1));
  REQUIRE(f.reconciler->Reconcile(kStart).ok());
  CHECK(f.server.StoredObject(kBuffer).is_null());  // steady: nothing to keep warm

  for (int i = 1; i <= 3; ++i) f.server.Upsert(Resource::kPods, Replica(absl::StrCat("r", i)));
  REQUIRE(f.LiveIs(4));
  REQUIRE(f.reconciler->Reconcile(kStart + absl::Minutes(1)).ok());
  const json buffer = f.server.StoredObject(kBuffer);
  REQUIRE(buffer.is_object());
  CHECK(buffer["spec"]["replicas"] == 3);
  CHECK(buffer["spec"]["podTemplateRef"]["name"] == "topofit-headroom-4gpu-nv-required");
  CHECK(f.server.StoredObject("/api/v1/namespaces/topofit-system/podtemplates/topofit-headroom-4gpu-nv-required")
            ["template"]["metadata"]["annotations"]["topofit.io/min-link"] == "NV");

  for (int i = 1; i <= 3; ++i) f.server.Delete(Resource::kPods, "serving", absl::StrCat("r", i));
  REQUIRE(f.LiveIs(1));
  // The rise leaves the 30-minute window, and the buffer goes 10 minutes later.
  for (int minute = 2; minute <= 45; ++minute) REQUIRE(f.reconciler->Reconcile(kStart + absl::Minutes(minute)).ok());
  CHECK(f.server.StoredObject(kBuffer).is_null());
  CHECK(f.reconciler->planned().empty());
  // Both changes are in the decision history, with why.
  const std::vector<history::Record> records = f.recorder.records();
  REQUIRE(records.size() == 2);
  CHECK(records[0].reason == history::Reason::kHeadroomGrew);
  CHECK(records[0].time == kStart + absl::Minutes(1));
  CHECK(records[0].gpus == 12);
  REQUIRE(records[0].headroom.has_value());
  CHECK(records[0].headroom->shape == "topofit-headroom-4gpu-nv-required");
  CHECK(records[0].headroom->was == 0);
  CHECK(records[0].headroom->replicas == 3);
  CHECK(records[0].headroom->largest_rise == 3);
  CHECK(records[0].headroom->boot_seconds == 600);
  CHECK(records[1].reason == history::Reason::kHeadroomShrank);
  CHECK(records[1].headroom->replicas == 0);
}

// --leader-elect: a replica that does not lead follows demand and writes nothing; once it leads again it reads
// what its successor wrote meanwhile before it writes.
TEST_CASE("Following writes nothing, and the next pass as leader reads the buffers again", "[headroom_reconciler]") {
  Fixture f(true);
  f.server.Upsert(Resource::kPods, Replica("r0", "n1"));
  f.Start();
  REQUIRE(f.LiveIs(1));
  REQUIRE(f.reconciler->Reconcile(kStart).ok());
  for (int i = 1; i <= 3; ++i) f.server.Upsert(Resource::kPods, Replica(absl::StrCat("r", i)));
  REQUIRE(f.LiveIs(4));
  REQUIRE(f.reconciler->Reconcile(kStart + absl::Minutes(1)).ok());
  REQUIRE(f.server.StoredObject(kBuffer)["spec"]["replicas"] == 3);

  // Another replica leads now, and writes 5.
  json theirs = f.server.StoredObject(kBuffer);
  theirs["spec"]["replicas"] = 5;
  f.server.PutStoredObject(kBuffer, theirs);
  const size_t requests = f.server.requests().size();
  f.reconciler->Follow(kStart + absl::Minutes(2));
  CHECK(f.server.requests().size() == requests);
  CHECK(f.server.StoredObject(kBuffer)["spec"]["replicas"] == 5);
  CHECK(f.reconciler->planned().begin()->second == 3);  // planned, not written
  CHECK(f.recorder.records().size() == 1);                // the leader's growth only

  // Leading again: its plan (3) is written over what it finds, not over what it last wrote.
  REQUIRE(f.reconciler->Reconcile(kStart + absl::Minutes(3)).ok());
  CHECK(f.server.StoredObject(kBuffer)["spec"]["replicas"] == 3);
}

TEST_CASE("End to end without the CapacityBuffer API: the same burst makes a placeholder Deployment",
          "[headroom_reconciler]") {
  Fixture f(false);
  f.server.Upsert(Resource::kPods, Replica("r0", "n1"));
  f.Start();
  CHECK(f.api.kind == HeadroomApi::Kind::kPlaceholders);
  REQUIRE(f.LiveIs(1));
  REQUIRE(f.reconciler->Reconcile(kStart).ok());
  for (int i = 1; i <= 2; ++i) f.server.Upsert(Resource::kPods, Replica(absl::StrCat("r", i)));
  REQUIRE(f.LiveIs(3));
  REQUIRE(f.reconciler->Reconcile(kStart + absl::Minutes(1)).ok());
  const json deployment = f.server.StoredObject(kDeployment);
  REQUIRE(deployment.is_object());
  CHECK(deployment["spec"]["replicas"] == 2);
  CHECK(deployment["spec"]["template"]["spec"]["priorityClassName"] == "topofit-headroom");
  // Its pods, once running, are not demand: the buffer does not feed itself.
  json placeholder = Replica("topofit-headroom-4gpu-nv-required-x", "n2");
  placeholder["spec"] = deployment["spec"]["template"]["spec"];
  f.server.Upsert(Resource::kPods, placeholder);
  f.server.Upsert(Resource::kPods, Replica("marker"));
  // Both events delivered (with r1 and r2's: four since the LIST): three replicas and the marker are live.
  REQUIRE(Eventually([&] { return f.watcher->stats().events >= 4; }));
  int live = 0;
  for (const auto& [shape, n] : f.demand.Live()) live += n;
  CHECK(live == 4);
}

}  // namespace
}  // namespace topofit::kubeclient
