#include "cli/kube_observability.h"

#include <catch2/catch.hpp>

#include <mutex>
#include <string>
#include <vector>

#include "kubeclient/leader_election.h"
#include "kubeclient/list_watcher.h"
#include "kubeclient/rest_client.h"
#include "nlohmann/json.hpp"
#include "server/logging.h"
#include "spdlog/sinks/base_sink.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/fake_clock.h"
#include "tests/server/test_certs.h"

namespace topofit::cli {
namespace {

using kubeclient::testing::Eventually;
using kubeclient::testing::FakeApiServer;
using kubeclient::testing::Match;
using kubeclient::testing::Resource;
using kubeclient::testing::StatusJson;

// Keeps each formatted line; read from the test thread while watcher threads log.
class LinesSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    lines_.emplace_back(formatted.data(), formatted.size());
  }
  void flush_() override {}

 private:
  std::vector<std::string> lines_;
};

// A fake API server, a registry and a JSON log to read back; the observability under test.
struct Harness {
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  FakeApiServer api{*certs};
  server::MetricsRegistry registry;
  server::FakeClock clock;
  std::shared_ptr<LinesSink> sink = std::make_shared<LinesSink>();
  std::shared_ptr<spdlog::logger> log =
      server::MakeLogger("test", server::LoggingOptions{server::LogFormat::kJson, spdlog::level::info}, sink);
  KubeObservability observability{registry, clock, log};

  // Log records named `msg`.
  std::vector<nlohmann::json> Logged(const std::string& msg) {
    std::vector<nlohmann::json> found;
    for (const std::string& line : sink->Lines()) {
      nlohmann::json j = nlohmann::json::parse(line);
      if (j["msg"] == msg) found.push_back(std::move(j));
    }
    return found;
  }
  std::unique_ptr<kubeclient::RestClient> Client(kubeclient::RestOptions options) {
    options.qps = 0;
    options.sleep = [](absl::Duration) {};
    return kubeclient::RestClient::Create(kubeclient::testing::ConfigFor(api, *certs), options).value();
  }
};

TEST_CASE("API attempts are counted by client, verb and code, retries logged once, and the recovery",
          "[cli][kube_observability]") {
  Harness h;
  kubeclient::RestOptions options;
  h.observability.Observe(options, "extender");
  std::unique_ptr<kubeclient::RestClient> rest = h.Client(options);
  for (int i = 0; i < 3; ++i) h.api.Script(503, StatusJson(503, "ServiceUnavailable", "etcd leader changed"));
  h.api.Upsert(Resource::kNodes, kubeclient::testing::NodeJson("n1"));
  REQUIRE(rest->Get("/api/v1/nodes/n1").ok());  // three 503s, then the node
  h.api.Script(404, StatusJson(404, "NotFound", "nodes \"n2\" not found"));
  CHECK(absl::IsNotFound(rest->Get("/api/v1/nodes/n2").status()));  // not retried

  const std::string text = h.registry.Render();
  CHECK(text.find("topofit_kube_api_requests_total{client=\"extender\",verb=\"GET\",code=\"503\"} 3\n") != std::string::npos);
  CHECK(text.find("topofit_kube_api_requests_total{client=\"extender\",verb=\"GET\",code=\"200\"} 1\n") != std::string::npos);
  CHECK(text.find("topofit_kube_api_requests_total{client=\"extender\",verb=\"GET\",code=\"404\"} 1\n") != std::string::npos);
  const std::vector<nlohmann::json> failing = h.Logged("kube_api_failing");
  REQUIRE(failing.size() == 1);  // three attempts failed alike: one line
  CHECK(failing[0]["client"] == "extender");
  CHECK(failing[0]["reason"] == "GET 503");
  CHECK(failing[0]["retry_in_seconds"].is_number());
  const std::vector<nlohmann::json> recovered = h.Logged("kube_api_recovered");
  REQUIRE(recovered.size() == 1);
  CHECK(recovered[0]["failed_attempts"] == 3);
}

TEST_CASE("Watch state: failures, the first list, a relist after 410 Gone", "[cli][kube_observability]") {
  Harness h;
  h.api.Upsert(Resource::kNodes, kubeclient::testing::NodeJson("n1"));
  h.api.Script(500, StatusJson(500, "InternalError", "etcdserver: request timed out"), {}, Match::kList);
  kubeclient::ListWatchOptions options;
  options.initial_backoff = absl::Milliseconds(1);
  options.max_backoff = absl::Milliseconds(5);
  h.observability.Observe(options, "nodes");
  std::unique_ptr<kubeclient::RestClient> rest = kubeclient::testing::DirectClientFor(h.api, *h.certs);
  kubeclient::WatchHandler<kube::Node> nothing;
  std::unique_ptr<kubeclient::ListWatcher> watcher = kubeclient::ListWatcher::ForNodes(*rest, options, nothing);
  CHECK(h.registry.Render().find("topofit_watch_synced{resource=\"nodes\"} 0\n") != std::string::npos);
  watcher->Start();
  // on_listed runs just after the watcher counts itself synced: wait for what it sets.
  REQUIRE(Eventually([&] {
    return h.registry.Render().find("topofit_watch_lists_total{resource=\"nodes\",kind=\"initial\"} 1\n") !=
           std::string::npos;
  }));
  std::string text = h.registry.Render();
  CHECK(text.find("topofit_watch_failures_total{resource=\"nodes\"} 1\n") != std::string::npos);
  CHECK(text.find("topofit_watch_synced{resource=\"nodes\"} 1\n") != std::string::npos);
  CHECK(text.find("topofit_watch_healthy{resource=\"nodes\"} 1\n") != std::string::npos);
  REQUIRE(h.Logged("watch_failing").size() == 1);
  CHECK(h.Logged("watch_failing")[0]["reason"].get<std::string>().find("etcdserver: request timed out") !=
        std::string::npos);
  // Logged after the list is counted (CI under ASan, once): wait for it too.
  CHECK(Eventually([&] { return h.Logged("watch_recovered").size() == 1; }));

  REQUIRE(h.api.WaitForOpenWatches(1, kubeclient::testing::kPatience));
  h.api.Compact();  // the open watch gets 410 Expired: the watcher lists again
  CHECK(Eventually([&] {
    return h.registry.Render().find("topofit_watch_lists_total{resource=\"nodes\",kind=\"relist\"} 1\n") !=
           std::string::npos;
  }));
  CHECK(Eventually([&] { return h.Logged("watch_relisted").size() == 1; }));
  watcher->Stop();
}

TEST_CASE("leader_election_master_status follows the Lease, election and loss are logged",
          "[cli][kube_observability]") {
  Harness h;
  std::unique_ptr<kubeclient::RestClient> rest = kubeclient::testing::DirectClientFor(h.api, *h.certs);
  kubeclient::LeaderElectionConfig config;
  config.namespace_name = "topofit-system";
  config.identity = "replica-a";
  config.clock = &h.clock;
  int started = 0;
  config.on_started_leading = [&started] { ++started; };
  h.observability.Observe(config);
  std::unique_ptr<kubeclient::LeaderElector> elector = kubeclient::LeaderElector::Create(*rest, config).value();
  CHECK(h.registry.Render().find("topofit_leader_election_master_status{name=\"topofit\"} 0\n") != std::string::npos);
  REQUIRE(elector->Round().ok());
  CHECK(h.registry.Render().find("topofit_leader_election_master_status{name=\"topofit\"} 1\n") != std::string::npos);
  CHECK(started == 1);  // the config's own callback still runs
  REQUIRE(h.Logged("leader_elected").size() == 1);
  CHECK(h.Logged("leader_elected")[0]["identity"] == "replica-a");
  elector->Stop();
  CHECK(h.registry.Render().find("topofit_leader_election_master_status{name=\"topofit\"} 0\n") != std::string::npos);
  CHECK(h.Logged("leader_lost").size() == 1);
}

}  // namespace
}  // namespace topofit::cli
