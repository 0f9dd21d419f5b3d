#include <future>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <spdlog/sinks/ostream_sink.h>

#include "codec/kube_json.h"
#include "kubeclient/kube_api.h"
#include "server/logging.h"
#include "tests/kube/builders.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/scheduler/extender_fixture.h"

namespace topofit::scheduler {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;

kube::Node P4d(const std::string& name) {
  return MakeNode().name(name).label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8);
}

// kube-scheduler retries a bind that outlived its httpTimeout while the first is still running. Before,
// both claims "succeeded" (the second taken as a repeat), the API server refused the second with 409,
// and that path forgot the pod: the GPUs of the pod the API server did bind were free again, and the
// next 8-GPU pod was bound to them too. Now binds of one pod run one at a time and a repeat never
// releases what an earlier bind claimed.
TEST_CASE("Two binds of one pod at once never free the GPUs the bound pod holds", "[extender][bind]") {
  for (int trial = 0; trial < 10; ++trial) {
    testing::ExtenderFixture f;
    REQUIRE(f.state->UpsertNode(P4d("p4d-1")).ok());
    const kube::Pod trainer = MakePod().name("trainer").uid("uid-trainer").gpus(8);
    f.kube.PutPod(trainer);
    REQUIRE(f.extender.Filter({trainer, std::nullopt, std::vector<std::string>{"p4d-1"}})->node_names->size() == 1);
    f.kube.SlowBindsBy(absl::Milliseconds(20));

    const codec::ExtenderBindingArgs args{"trainer", "default", "uid-trainer", "p4d-1"};
    auto first = std::async(std::launch::async, [&] { return *f.extender.Bind(args); });
    auto retry = std::async(std::launch::async, [&] { return *f.extender.Bind(args); });
    INFO("trial " << trial);
    // The retry finds the pod bound where the first put it: both report success.
    CHECK(first.get() == "");
    CHECK(retry.get() == "");
    CHECK(f.state->Snapshot("p4d-1")->free().empty());
    REQUIRE(f.state->AssignmentOf("uid-trainer"));
    CHECK(f.state->AssignmentOf("uid-trainer")->second.size() == 8);

    // The next 8-GPU pod is refused on the full node, by filter and by bind.
    const kube::Pod next = MakePod().name("next").uid("uid-next").gpus(8);
    f.kube.PutPod(next);
    CHECK(f.extender.Filter({next, std::nullopt, std::vector<std::string>{"p4d-1"}})->node_names->empty());
    CHECK_THAT(*f.extender.Bind({"next", "default", "uid-next", "p4d-1"}), Catch::Contains("needs 8 GPUs, 0 free"));
  }
}

TEST_CASE("A bind that fails releases only what it claimed", "[extender][bind]") {
  testing::ExtenderFixture f;
  REQUIRE(f.state->UpsertNode(P4d("p4d-1")).ok());
  REQUIRE(f.state->UpsertNode(P4d("p4d-2")).ok());
  const kube::Pod trainer = MakePod().name("trainer").uid("uid-trainer").gpus(4);
  f.kube.PutPod(trainer);
  REQUIRE(f.extender.Filter({trainer, std::nullopt, std::vector<std::string>{"p4d-1", "p4d-2"}}).ok());
  REQUIRE(*f.extender.Bind({"trainer", "default", "uid-trainer", "p4d-1"}) == "");

  SECTION("a repeat the API server refuses for another reason keeps the earlier claim") {
    f.kube.FailBindsWith(absl::UnavailableError("the API server is restarting"));
    CHECK_THAT(*f.extender.Bind({"trainer", "default", "uid-trainer", "p4d-1"}), Catch::Contains("restarting"));
    CHECK(f.state->Snapshot("p4d-1")->free().size() == 4);
  }
  SECTION("a bind of the pod to another node is refused and changes nothing") {
    CHECK_THAT(*f.extender.Bind({"trainer", "default", "uid-trainer", "p4d-2"}),
               Catch::Contains("holds GPUs 0,1,2,3 on node p4d-1"));
    CHECK(f.state->Snapshot("p4d-1")->free().size() == 4);
    CHECK(f.state->Snapshot("p4d-2")->free().size() == 8);
  }
  SECTION("a first bind the API server refuses releases its claim") {
    const kube::Pod other = MakePod().name("other").uid("uid-other").gpus(4);
    f.kube.PutPod(other);
    REQUIRE(f.extender.Filter({other, std::nullopt, std::vector<std::string>{"p4d-2"}}).ok());
    f.kube.FailBindsWith(absl::UnavailableError("the API server is restarting"));
    CHECK(*f.extender.Bind({"other", "default", "uid-other", "p4d-2"}) != "");
    CHECK(f.state->Snapshot("p4d-2")->free().size() == 8);
    CHECK(f.state->Snapshot("p4d-1")->free().size() == 4);  // the trainer's claim is untouched
  }
}


// An extender on the real Kubernetes client against the fake API server, its log kept for reading.
struct ApiBackedExtender {
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  kubeclient::testing::FakeApiServer api{*certs};
  std::unique_ptr<kubeclient::RestClient> rest = kubeclient::testing::DirectClientFor(api, *certs);
  kubeclient::KubeApi kube{*rest};
  server::FakeClock clock;
  server::MetricsRegistry registry;
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  std::unique_ptr<ledger::Ledger> ledger = ledger::NewInMemoryLedger(clock);
  ExtenderMetrics metrics = ExtenderMetrics::Create(registry);
  std::ostringstream logged;
  std::shared_ptr<spdlog::logger> log =
      server::MakeLogger("test", {}, std::make_shared<spdlog::sinks::ostream_sink_mt>(logged));
  DrainGuard drain_guard{*state, kube, *log, registry};
  Extender extender{*state, *ledger, kube, metrics, *log, clock};

  ApiBackedExtender() { extender.GuardFromDrains(&drain_guard); }

  // Binding POSTs the API server received.
  int bindings() const {
    int n = 0;
    for (const auto& request : api.requests()) n += request.method == "POST" && request.target.ends_with("/binding");
    return n;
  }
};

nlohmann::json StoredPod(const std::string& namespace_name, const std::string& name, const std::string& scheduler) {
  nlohmann::json pod = kubeclient::testing::PodJson(namespace_name, name, "", scheduler);
  pod["metadata"]["uid"] = "uid-" + name;
  return pod;
}

// The attack of issue 14: with the extender reachable, POST /bind named a pod of another scheduler in
// kube-system, asking for no GPU, and topofit created its Binding. Every such bind is refused now.
TEST_CASE("Bind refuses, counts and logs what the API server's pod does not authorise, and creates no Binding",
          "[extender][bind]") {
  ApiBackedExtender f;
  REQUIRE(f.api.valid());
  REQUIRE(f.state->UpsertNode(P4d("p4d-1")).ok());
  f.api.Upsert(kubeclient::testing::Resource::kPods, StoredPod("ml", "trainer", "topofit"));
  nlohmann::json victim = StoredPod("kube-system", "victim", "default-scheduler");
  victim["spec"]["containers"][0]["resources"] = nlohmann::json::object();
  f.api.Upsert(kubeclient::testing::Resource::kPods, victim);
  nlohmann::json foreign_gpu = StoredPod("ml", "other-team", "default-scheduler");
  f.api.Upsert(kubeclient::testing::Resource::kPods, foreign_gpu);
  nlohmann::json cpu_only = StoredPod("ml", "web", "topofit");
  cpu_only["spec"]["containers"][0]["resources"] = nlohmann::json::object();
  f.api.Upsert(kubeclient::testing::Resource::kPods, cpu_only);

  struct Row {
    const char* name;
    codec::ExtenderBindingArgs args;
    const char* refusal;
  };
  const Row rows[] = {
      {"the issue's victim: another scheduler's pod in kube-system, no GPU",
       {"victim", "kube-system", "uid-victim", "p4d-1"}, "foreign-scheduler"},
      {"another scheduler's GPU pod", {"other-team", "ml", "uid-other-team", "p4d-1"}, "foreign-scheduler"},
      {"a pod of topofit's profile asking for no GPU", {"web", "ml", "uid-web", "p4d-1"}, "no-gpu-request"},
      {"a uid that is not the stored pod's", {"trainer", "ml", "uid-forged", "p4d-1"}, "uid-mismatch"},
      {"a node topofit does not know", {"trainer", "ml", "uid-trainer", "ghost"}, "unknown-node"},
      {"a pod the API server does not have", {"nobody", "ml", "uid-nobody", "p4d-1"}, "unknown-pod"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      absl::StatusOr<std::string> reply = f.extender.Bind(row.args);
      REQUIRE(reply.ok());
      CHECK_THAT(*reply, Catch::Contains(absl::StrCat("bind refused (", row.refusal, ")")));
      CHECK(f.metrics.bind_refusals.Value({row.refusal}) == 1);
      CHECK(f.metrics.binds.Value({"refused"}) == 1);
      CHECK(f.metrics.binds.Value({"ok"}) == 0);
      CHECK_THAT(f.logged.str(), Catch::Contains(absl::StrCat("refusal=", row.refusal)));
      CHECK(f.bindings() == 0);
      CHECK(f.state->Snapshot("p4d-1")->free().size() == 8);  // nothing claimed
      const nlohmann::json stored = f.api.Object(kubeclient::testing::Resource::kPods, row.args.pod_namespace,
                                                 row.args.pod_name);
      if (!stored.is_null()) {
        CHECK_FALSE(stored["spec"].contains("nodeName"));
        CHECK_FALSE(stored["metadata"].contains("annotations"));  // no topofit.io/gpu-ids written either
      }
    }
  }
  SECTION("the pod the scheduler really sent binds") {
    REQUIRE(*f.extender.Bind({"trainer", "ml", "uid-trainer", "p4d-1"}) == "");
    CHECK(f.bindings() == 1);
    CHECK(f.api.Object(kubeclient::testing::Resource::kPods, "ml", "trainer")["spec"]["nodeName"] == "p4d-1");
    CHECK(f.metrics.binds.Value({"ok"}) == 1);
  }
}

TEST_CASE("Bind reads the pod from the API server even after a filter call described it", "[extender][bind]") {
  ApiBackedExtender f;
  REQUIRE(f.api.valid());
  REQUIRE(f.state->UpsertNode(P4d("p4d-1")).ok());
  f.api.Upsert(kubeclient::testing::Resource::kPods, StoredPod("kube-system", "victim", "default-scheduler"));
  // A caller describes the victim to filter as a topofit GPU pod; the stored pod still decides.
  const kube::Pod forged = [] {
    kube::Pod pod = MakePod().name("victim").gpus(1);
    pod.metadata.namespace_name = "kube-system";
    return pod;
  }();
  REQUIRE(f.extender.Filter({forged, std::nullopt, std::vector<std::string>{"p4d-1"}}).ok());
  CHECK_THAT(*f.extender.Bind({"victim", "kube-system", "uid-victim", "p4d-1"}),
             Catch::Contains("bind refused (foreign-scheduler)"));
  CHECK(f.bindings() == 0);
}

// The pending pods a watch holds (kubeclient/pending_pod_cache.h feeds the real one), by namespace/name.
class WatchedPods final : public PendingPods {
 public:
  void Put(const nlohmann::json& pod) {
    kube::Pod decoded = codec::PodFromJson(pod).value();
    pods_[decoded.metadata.namespace_name + "/" + decoded.metadata.name] = std::make_shared<const kube::Pod>(decoded);
  }
  std::shared_ptr<const kube::Pod> Find(absl::string_view ns, absl::string_view name) const override {
    auto it = pods_.find(absl::StrCat(ns, "/", name));
    return it == pods_.end() ? nullptr : it->second;
  }

 private:
  std::map<std::string, std::shared_ptr<const kube::Pod>> pods_;
};

// Issue 38: at kube-scheduler's client defaults (50 QPS, burst 100) two API calls a bind bound a burst of
// 100 binds in 2 s; reading the pod from the watch of pending pods makes it one.
TEST_CASE("A bind whose pod the pending-pod watch holds makes one API call, the Binding", "[extender][bind]") {
  ApiBackedExtender f;
  REQUIRE(f.api.valid());
  REQUIRE(f.state->UpsertNode(P4d("p4d-1")).ok());
  WatchedPods watched;
  f.extender.ReadPendingPodsFrom(&watched);
  const nlohmann::json trainer = StoredPod("ml", "trainer", "topofit");
  f.api.Upsert(kubeclient::testing::Resource::kPods, trainer);
  const auto calls_after = [&f](size_t before) {
    std::vector<std::string> calls;
    const auto requests = f.api.requests();
    for (size_t i = before; i < requests.size(); ++i) calls.push_back(requests[i].method + " " + requests[i].target);
    return calls;
  };
  const size_t before = f.api.requests().size();

  SECTION("the watch holds the pod: no GET") {
    watched.Put(trainer);
    REQUIRE(*f.extender.Bind({"trainer", "ml", "uid-trainer", "p4d-1"}) == "");
    const std::vector<std::string> calls = calls_after(before);
    REQUIRE(calls.size() == 1);
    CHECK_THAT(calls[0], Catch::StartsWith("POST /api/v1/namespaces/ml/pods/trainer/binding"));
    CHECK(f.metrics.bind_pod_reads.Value({"watch"}) == 1);
    CHECK(f.metrics.bind_pod_reads.Value({"api"}) == 0);
    CHECK(f.api.Object(kubeclient::testing::Resource::kPods, "ml", "trainer")["spec"]["nodeName"] == "p4d-1");
  }
  SECTION("the watch's copy has another uid (it lags a recreation): the API server's pod decides") {
    nlohmann::json old = trainer;
    old["metadata"]["uid"] = "uid-old";
    watched.Put(old);
    REQUIRE(*f.extender.Bind({"trainer", "ml", "uid-trainer", "p4d-1"}) == "");
    const std::vector<std::string> calls = calls_after(before);
    REQUIRE(calls.size() == 2);
    CHECK_THAT(calls[0], Catch::StartsWith("GET /api/v1/namespaces/ml/pods/trainer"));
    CHECK(f.metrics.bind_pod_reads.Value({"api"}) == 1);
  }
  SECTION("the pod was recreated after the watch saw it: the Binding's uid precondition refuses the old one") {
    watched.Put(trainer);
    nlohmann::json recreated = trainer;
    recreated["metadata"]["uid"] = "uid-recreated";
    f.api.Upsert(kubeclient::testing::Resource::kPods, recreated);
    const std::string error = *f.extender.Bind({"trainer", "ml", "uid-trainer", "p4d-1"});
    CHECK_THAT(error, Catch::Contains("Precondition failed"));
    CHECK_FALSE(f.api.Object(kubeclient::testing::Resource::kPods, "ml", "trainer")["spec"].contains("nodeName"));
    CHECK(f.state->Snapshot("p4d-1")->free().size() == 8);  // what the bind claimed is released
  }
  SECTION("the watch's copy is judged as a GET's would be: another scheduler's pod is refused") {
    watched.Put(StoredPod("ml", "trainer", "default-scheduler"));
    CHECK_THAT(*f.extender.Bind({"trainer", "ml", "uid-trainer", "p4d-1"}),
               Catch::Contains("bind refused (foreign-scheduler)"));
    CHECK(f.bindings() == 0);
  }
}

TEST_CASE("An API server that cannot be read fails the bind as an error, not a refusal", "[extender][bind]") {
  ApiBackedExtender f;
  REQUIRE(f.api.valid());
  REQUIRE(f.state->UpsertNode(P4d("p4d-1")).ok());
  f.api.Script(503, kubeclient::testing::StatusJson(503, "ServiceUnavailable", "etcd is down"));
  CHECK_THAT(*f.extender.Bind({"trainer", "ml", "uid-trainer", "p4d-1"}), Catch::Contains("reading pod ml/trainer"));
  CHECK(f.metrics.binds.Value({"error"}) == 1);
  CHECK(f.metrics.binds.Value({"refused"}) == 0);
  CHECK(f.bindings() == 0);
}

// The drain guard over the real client: its merge patches set CA's annotation on the API server's pod and
// remove it again (null in a JSON merge patch), leaving the owner's and topofit's other annotations alone.
TEST_CASE("The drain guard's annotation reaches the API server's pod and leaves it again", "[extender][drain_guard]") {
  ApiBackedExtender f;
  REQUIRE(f.api.valid());
  REQUIRE(f.state->UpsertNode(P4d("p4d-1")).ok());
  REQUIRE(f.state->UpsertNode(P4d("p4d-2")).ok());
  nlohmann::json trainer = StoredPod("ml", "trainer", "topofit");
  trainer["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", "4"}}}};
  trainer["metadata"]["annotations"] = {{"topofit.io/min-link", "NV"}, {"topofit.io/topology-policy", "required"},
                                        {"team", "vision"}};
  f.api.Upsert(kubeclient::testing::Resource::kPods, trainer);
  const auto annotations = [&f] {
    return f.api.Object(kubeclient::testing::Resource::kPods, "ml", "trainer")["metadata"]["annotations"];
  };

  REQUIRE(*f.extender.Bind({"trainer", "ml", "uid-trainer", "p4d-1"}) == "");
  CHECK(annotations()["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "false");
  CHECK(annotations()["team"] == "vision");

  // p4d-2 gets a pod and keeps four NVLink GPUs free: a drain would move the trainer there.
  REQUIRE(f.state->Assume(PodRef{"uid-other", "ml", "other"}, "p4d-2", topology::GpuSet::FirstN(4)).ok());
  f.drain_guard.Refresh();
  CHECK_FALSE(annotations().contains("cluster-autoscaler.kubernetes.io/safe-to-evict"));
  CHECK(annotations()["team"] == "vision");
  CHECK(annotations()["topofit.io/gpu-ids"] == "0,1,2,3");
  CHECK_THAT(f.logged.str(), Catch::Contains("drain_guard"));
}

}  // namespace
}  // namespace topofit::scheduler
