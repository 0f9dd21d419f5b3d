#include "kubeclient/restart_collector.h"

#include <algorithm>
#include <memory>
#include <string>

#include <catch2/catch.hpp>
#include <spdlog/sinks/null_sink.h>

#include "absl/strings/str_cat.h"
#include "history/record_json.h"
#include "tests/history/memory_recorder.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/fake_clock.h"

namespace topofit::kubeclient {
namespace {

using testing::Eventually;
using testing::FakeApiServer;
using testing::Resource;

// A bound GPU pod whose container `train` has restarted `restarts` times, the last run ended as `ended`.
nlohmann::json RestartedPod(const std::string& ns, const std::string& name, int restarts,
                            const nlohmann::json& ended = nullptr) {
  nlohmann::json pod = testing::PodJson(ns, name, "gpu-1", "topofit");
  pod["metadata"]["uid"] = "uid-" + name;
  pod["metadata"]["annotations"] = {{"topofit.io/gpu-ids", "0,1"}};
  pod["spec"]["containers"][0]["name"] = "train";
  pod["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", "2"}}}};
  nlohmann::json status = {{"name", "train"}, {"restartCount", restarts}};
  if (!ended.is_null()) {
    status["lastState"] = {{"terminated", ended}};
    status["state"] = {{"waiting", {{"reason", "CrashLoopBackOff"}}}};
  }
  pod["status"]["containerStatuses"] = nlohmann::json::array({status});
  return pod;
}

const nlohmann::json kOomKilled = {{"exitCode", 137}, {"signal", 9}, {"reason", "OOMKilled"}};

struct Collector {
  explicit Collector(RestartCollectorOptions options = {}) : options(std::move(options)) {}
  void Start() {
    collector = std::make_unique<RestartCollector>(kube, recorder, clock, log, registry, options);
    ListWatchOptions watch_options;
    watch_options.field_selector = "spec.nodeName!=";
    watch = std::make_unique<ListWatcher>(*rest, "/api/v1/pods", watch_options, collector->Sink());
    watch->Start();
    REQUIRE(watch->WaitForSync(testing::kPatience));
  }
  std::vector<history::Record> Settled() {
    REQUIRE(collector->WaitIdle(testing::kPatience));
    return recorder.records();
  }
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  FakeApiServer api{*certs};
  std::unique_ptr<RestClient> rest = testing::DirectClientFor(api, *certs);
  KubeApi kube{*rest};
  history::testing::MemoryRecorder recorder;
  server::FakeClock clock;
  server::MetricsRegistry registry;
  spdlog::logger log{"test", std::make_shared<spdlog::sinks::null_sink_mt>()};
  RestartCollectorOptions options;
  std::unique_ptr<RestartCollector> collector;
  std::unique_ptr<ListWatcher> watch;
};

TEST_CASE("RestartCollector: a restart is recorded with its cause, termination, Warning events, log tail and GPUs",
          "[restarts]") {
  Collector c;
  c.api.Upsert(Resource::kPods, RestartedPod("ml", "trainer", 0));
  c.Start();
  c.api.PutStoredObject("/api/v1/namespaces/ml/events/trainer.1",
                        {{"metadata", {{"name", "trainer.1"}, {"namespace", "ml"}}},
                         {"involvedObject", {{"kind", "Pod"}, {"uid", "uid-trainer"}, {"name", "trainer"}}},
                         {"type", "Warning"}, {"reason", "BackOff"},
                         {"message", "Back-off restarting failed container train"}});
  c.api.PutStoredObject("/api/v1/namespaces/ml/events/other.1",
                        {{"metadata", {{"name", "other.1"}, {"namespace", "ml"}}},
                         {"involvedObject", {{"kind", "Pod"}, {"uid", "uid-other"}}}, {"type", "Warning"},
                         {"reason", "BackOff"}, {"message", "not this pod's"}});
  std::string log;
  for (int i = 1; i <= 80; ++i) absl::StrAppend(&log, "step ", i, "\n");
  c.api.SetPreviousLog("ml", "trainer", "train", log);

  c.api.Upsert(Resource::kPods, RestartedPod("ml", "trainer", 1, kOomKilled));
  REQUIRE(Eventually([&] { return !c.recorder.records().empty(); }));
  const std::vector<history::Record> records = c.Settled();
  REQUIRE(records.size() == 1);
  const history::Record& r = records.front();
  CHECK(r.kind == history::Kind::kRestart);
  CHECK(r.component == history::Component::kRestarts);
  CHECK(history::ReasonName(r.reason) == "oom");
  CHECK(r.correlation_id == "uid-trainer");
  REQUIRE(r.pods.size() == 1);
  CHECK(r.pods[0].key == "ml/trainer");
  CHECK(r.node == "gpu-1");
  CHECK(r.gpus == 2);
  REQUIRE(r.restart.has_value());
  CHECK(r.restart->container == "train");
  CHECK(r.restart->restart_count == 1);
  CHECK(r.restart->exit_code == 137);
  CHECK(r.restart->signal == 9);
  CHECK(r.restart->termination_reason == "OOMKilled");
  CHECK(r.restart->waiting_reason == "CrashLoopBackOff");
  CHECK(r.restart->gpu_ids == "0,1");
  CHECK(r.restart->warnings == std::vector<std::string>{"BackOff: Back-off restarting failed container train"});
  CHECK_THAT(r.restart->diagnosis, Catch::Contains("exceeded its memory limit"));
  // The reference's 50 lines: steps 31 to 80.
  CHECK(r.restart->log_tail.rfind("step 31\n", 0) == 0);
  CHECK_THAT(r.restart->log_tail, Catch::EndsWith("step 80\n"));
  CHECK_THAT(c.registry.Render(), Catch::Contains("topofit_restarts_total{cause=\"oom\"} 1"));

  SECTION("the same counts again record nothing more; the next restart does") {
    c.api.Upsert(Resource::kPods, RestartedPod("ml", "trainer", 1, kOomKilled));
    c.api.Upsert(Resource::kPods, RestartedPod("ml", "trainer", 2, {{"exitCode", 1}, {"reason", "Error"}}));
    REQUIRE(Eventually([&] { return c.recorder.records().size() == 2; }));
    CHECK(history::ReasonName(c.Settled().back().reason) == "application-error");
  }
}

TEST_CASE("RestartCollector: pods first seen with restarts set the baseline, ignored namespaces and prefixes are left out",
          "[restarts]") {
  RestartCollectorOptions options;
  options.scope.ignored_namespaces = {"kube-system"};
  options.scope.ignored_name_prefixes = {"canary-"};
  Collector c(options);
  c.api.Upsert(Resource::kPods, RestartedPod("ml", "veteran", 7, kOomKilled));
  c.api.Upsert(Resource::kPods, RestartedPod("kube-system", "dns", 0));
  c.api.Upsert(Resource::kPods, RestartedPod("ml", "canary-1", 0));
  c.Start();
  c.api.Upsert(Resource::kPods, RestartedPod("kube-system", "dns", 1, kOomKilled));
  c.api.Upsert(Resource::kPods, RestartedPod("ml", "canary-1", 1, kOomKilled));
  c.api.Upsert(Resource::kPods, RestartedPod("ml", "late", 3, kOomKilled));  // first seen now: a baseline
  c.api.Upsert(Resource::kPods, RestartedPod("ml", "veteran", 8, kOomKilled));
  REQUIRE(Eventually([&] { return !c.recorder.records().empty(); }));
  const std::vector<history::Record> records = c.Settled();
  REQUIRE(records.size() == 1);
  CHECK(records[0].pods[0].key == "ml/veteran");
  CHECK(records[0].restart->restart_count == 8);
}

TEST_CASE("RestartCollector: a restart while the watch was down is recorded after the relist", "[restarts]") {
  Collector c;
  RestartCollector collector(c.kube, c.recorder, c.clock, c.log, c.registry);
  ListWatcher::Sink sink = collector.Sink();
  CHECK(sink.List({RestartedPod("ml", "trainer", 2, kOomKilled), RestartedPod("ml", "gone", 0)}) == 0);
  CHECK(sink.List({RestartedPod("ml", "trainer", 3, kOomKilled)}) == 0);  // relisted after a 410
  REQUIRE(collector.WaitIdle(testing::kPatience));
  REQUIRE(c.recorder.records().size() == 1);
  CHECK(c.recorder.records()[0].restart->restart_count == 3);
  // Unreadable events or logs (the fake has none for this pod) do not keep the restart from the history.
  CHECK(c.recorder.records()[0].restart->log_tail.empty());
  CHECK(sink.List({nlohmann::json::array()}) == 1);  // not a pod: counted undecodable
}

TEST_CASE("RestartCollector: a LIST that fails between pages loses no pod's counts", "[restarts]") {
  Collector c;
  RestartCollector collector(c.kube, c.recorder, c.clock, c.log, c.registry);
  ListWatcher::Sink sink = collector.Sink();
  CHECK(sink.List({RestartedPod("ml", "a", 1, kOomKilled), RestartedPod("ml", "b", 1, kOomKilled)}) == 0);
  // A relist whose first page came and whose second did not; then the relist again, both pods restarted
  // while the watch was down: each restart recorded once.
  CHECK(sink.on_list_page({RestartedPod("ml", "a", 2, kOomKilled)}, true) == 0);
  CHECK(sink.on_list_page({RestartedPod("ml", "a", 2, kOomKilled)}, true) == 0);
  CHECK(sink.on_list_page({RestartedPod("ml", "b", 2, kOomKilled)}, false) == 0);
  sink.on_sync();
  REQUIRE(collector.WaitIdle(testing::kPatience));
  std::vector<std::string> recorded;
  for (const history::Record& record : c.recorder.records()) recorded.push_back(record.pods[0].key);
  std::sort(recorded.begin(), recorded.end());
  CHECK(recorded == std::vector<std::string>{"ml/a", "ml/b"});
}

TEST_CASE("RestartCollector: in a restart storm every restart is recorded, those past the queue without API reads",
          "[restarts]") {
  Collector c;
  RestartCollectorOptions options;
  options.queue_capacity = 1;
  RestartCollector collector(c.kube, c.recorder, c.clock, c.log, c.registry, options);
  ListWatcher::Sink sink = collector.Sink();
  std::vector<nlohmann::json> pods;
  for (int p = 0; p < 20; ++p) pods.push_back(RestartedPod("ml", absl::StrCat("worker-", p), 0));
  sink.List(pods);
  c.api.DelayReplies(absl::Milliseconds(20));  // the worker falls behind
  for (int p = 0; p < 20; ++p) {
    CHECK(sink.on_event(WatchEventType::kModified, RestartedPod("ml", absl::StrCat("worker-", p), 1, kOomKilled)));
  }
  REQUIRE(collector.WaitIdle(testing::kPatience));
  CHECK(c.recorder.records().size() == 20);
  CHECK_THAT(c.registry.Render(), Catch::Contains("topofit_restarts_unread_total{reason=\"queue-full\"}"));
}

TEST_CASE("RestartCollector: a GPU of the pod its node's agent reports unhealthy makes the restart a GPU fault",
          "[restarts]") {
  Collector c;
  nlohmann::json node = testing::NodeJson("gpu-1", 8);
  node["metadata"]["annotations"] = {{"topofit.io/unhealthy-gpus", "1,6"}};
  c.api.Upsert(Resource::kNodes, node);
  c.api.Upsert(Resource::kPods, RestartedPod("ml", "trainer", 0));  // holds GPUs 0,1
  c.Start();
  c.api.Upsert(Resource::kPods, RestartedPod("ml", "trainer", 1, {{"exitCode", 1}, {"reason", "Error"}}));
  REQUIRE(Eventually([&] { return c.recorder.records().size() == 1; }));
  const history::Record record = c.Settled().front();
  CHECK(history::ReasonName(record.reason) == "gpu-fault");
  CHECK(record.restart->unhealthy_gpus == std::vector<int>{1});
  SECTION("the node healthy again: the next crash is the application's") {
    node["metadata"]["annotations"] = nlohmann::json::object();
    c.api.Upsert(Resource::kNodes, node);
    c.api.Upsert(Resource::kPods, RestartedPod("ml", "trainer", 2, {{"exitCode", 1}, {"reason", "Error"}}));
    REQUIRE(Eventually([&] { return c.recorder.records().size() == 2; }));
    CHECK(history::ReasonName(c.Settled().back().reason) == "application-error");
    CHECK(c.Settled().back().restart->unhealthy_gpus.empty());
  }
}

TEST_CASE("RestartCollector: the node's conditions and Warning events go with the restart, as the reference collects them",
          "[restarts]") {
  Collector c;
  nlohmann::json node = testing::NodeJson("gpu-1", 8);
  node["status"]["conditions"] = {
      {{"type", "MemoryPressure"}, {"status", "False"}, {"reason", "KubeletHasSufficientMemory"}},
      {{"type", "DiskPressure"}, {"status", "True"}, {"reason", "KubeletHasDiskPressure"}},
      {{"type", "Ready"}, {"status", "False"}, {"reason", "KubeletNotReady"}}};
  c.api.Upsert(Resource::kNodes, node);
  const auto node_event = [&](const std::string& name, const std::string& node_name, const std::string& type,
                              const std::string& reason, const std::string& message) {
    c.api.PutStoredObject("/api/v1/namespaces/default/events/" + name,
                          {{"metadata", {{"name", name}, {"namespace", "default"}}},
                           {"involvedObject", {{"kind", "Node"}, {"name", node_name}, {"uid", node_name}}},
                           {"type", type}, {"reason", reason}, {"message", message}});
  };
  node_event("gpu-1.xid", "gpu-1", "Warning", "GpuXid", "Xid 79 on GPU 00000000:3B:00.0");
  node_event("gpu-1.normal", "gpu-1", "Normal", "NodeReady", "not a warning");
  node_event("gpu-2.xid", "gpu-2", "Warning", "GpuXid", "another node's");
  c.api.Upsert(Resource::kPods, RestartedPod("ml", "trainer", 0));
  c.Start();
  c.api.Upsert(Resource::kPods, RestartedPod("ml", "trainer", 1, {{"exitCode", 1}, {"reason", "Error"}}));
  REQUIRE(Eventually([&] { return c.recorder.records().size() == 1; }));
  const history::RestartDetail detail = *c.Settled().front().restart;
  CHECK(detail.node_conditions == "Ready=False (KubeletNotReady), DiskPressure=True (KubeletHasDiskPressure)");
  CHECK(detail.node_warnings == std::vector<std::string>{"GpuXid: Xid 79 on GPU 00000000:3B:00.0"});
  // Told, and kept: the record as the store writes and reads it.
  const history::Record read = history::RecordFromJson(history::RecordToJson(c.Settled().front())).value();
  CHECK(read.restart->node_conditions == detail.node_conditions);
  CHECK(read.restart->node_warnings == detail.node_warnings);
}

TEST_CASE("RestartCollector: each restart record goes to on_restart with its pod, as it goes to the history",
          "[restarts]") {
  Collector c;
  RestartCollectorOptions options;
  std::vector<std::pair<std::string, history::Record>> seen;  // the worker's thread alone writes it
  options.on_restart = [&seen](const kube::Pod& pod, const history::Record& record) {
    seen.emplace_back(pod.metadata.labels.at("team"), record);
  };
  RestartCollector collector(c.kube, c.recorder, c.clock, c.log, c.registry, options);
  ListWatcher::Sink sink = collector.Sink();
  nlohmann::json pod = RestartedPod("ml", "trainer", 0);
  pod["metadata"]["labels"] = {{"team", "vision"}};
  sink.List({pod});
  pod = RestartedPod("ml", "trainer", 1, kOomKilled);
  pod["metadata"]["labels"] = {{"team", "vision"}};
  CHECK(sink.on_event(WatchEventType::kModified, pod));
  REQUIRE(collector.WaitIdle(testing::kPatience));
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].first == "vision");
  REQUIRE(c.recorder.records().size() == 1);
  CHECK(seen[0].second.restart == c.recorder.records()[0].restart);
  CHECK(history::ReasonName(seen[0].second.reason) == "oom");
}

}  // namespace
}  // namespace topofit::kubeclient
