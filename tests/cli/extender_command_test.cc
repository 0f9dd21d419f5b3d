#include "cli/extender_command.h"

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <atomic>
#include <future>
#include <optional>
#include <set>
#include <string>

#include <catch2/catch.hpp>
#include <httplib.h>

#include <spdlog/sinks/null_sink.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/build_info.h"
#include "cli/expander_command.h"
#include "server/shutdown.h"
#include "tests/cli/scratch_dir.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/non_loopback_address.h"

namespace topofit::cli {
namespace {

// A scratch directory with a kubeconfig and an admin token.
struct Scratch : testing::ScratchDir {
  Scratch() : ScratchDir("topofit-extender-test") { Write("token", "admin-secret\n"); }
};

// A kubeconfig in `scratch` for the fake API server, trusting its CA; returns its path.
std::string KubeconfigFor(Scratch& scratch, const kubeclient::testing::FakeApiServer& api,
                          const topofit::testing::TestCerts& certs) {
  scratch.Write("fake-api-kubeconfig",
                Scratch::Kubeconfig(absl::StrCat("server: \"", api.url(), "\", certificate-authority: \"",
                                                 certs.ca_cert_file(), "\"")));
  return scratch.path("fake-api-kubeconfig");
}

// An extender on 127.0.0.1, ports chosen by the system, talking to the API server of `kubeconfig`.
ExtenderOptions LoopbackOptions(const std::string& kubeconfig) {
  ExtenderOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.ops_port = 0;
  options.kubeconfig = kubeconfig;
  return options;
}

TEST_CASE("extender rejects bad options with exit 1", "[cli][extender]") {
  Scratch scratch;
  ExtenderOptions base;
  base.kubeconfig = scratch.path("kubeconfig");
  struct Row {
    const char* name;
    std::function<void(ExtenderOptions&)> change;
  };
  const Row rows[] = {
      {"log format", [](ExtenderOptions& o) { o.log_format = "xml"; }},
      {"log level", [](ExtenderOptions& o) { o.log_level = "loud"; }},
      {"cert without key", [](ExtenderOptions& o) { o.tls_cert = "/tmp/cert.pem"; }},
      {"unreadable certificate", [](ExtenderOptions& o) { o.tls_cert = o.tls_key = "/nonexistent.pem"; }},
      {"missing admin token file", [](ExtenderOptions& o) { o.admin_token_file = "/nonexistent/token"; }},
      {"missing kubeconfig", [](ExtenderOptions& o) { o.kubeconfig = "/nonexistent/kubeconfig"; }},
      {"zero body limit", [](ExtenderOptions& o) { o.max_body_bytes = 0; }},
      {"unknown ledger", [](ExtenderOptions& o) { o.ledger = "disk"; }},
      {"zero API QPS", [](ExtenderOptions& o) { o.kube_api_qps = 0; }},
      {"NaN API QPS", [](ExtenderOptions& o) { o.kube_api_qps = std::nan(""); }},
      {"zero API burst", [](ExtenderOptions& o) { o.kube_api_burst = 0; }},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      ExtenderOptions options = base;
      options.port = options.ops_port = 0;
      row.change(options);
      CHECK(RunExtender(options) == 1);
    }
  }
}

// Bind binds pods: whoever reaches the verbs' port can call it, so beyond loopback only callers holding a
// certificate of --tls-client-ca may, unless the operator says --insecure.
TEST_CASE("extender refuses to listen beyond loopback without client certificates unless --insecure",
          "[cli][extender]") {
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  kubeclient::testing::FakeApiServer api(*certs);
  REQUIRE(api.valid());
  Scratch scratch;
  ExtenderOptions options = LoopbackOptions(KubeconfigFor(scratch, api, *certs));
  ProcessState process;
  spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  CHECK(ExtenderOptions().address == "127.0.0.1");
  CHECK(BuildExtender(options, process, log, {}).ok());

  options.address = "0.0.0.0";
  absl::StatusOr<ExtenderServers> open = BuildExtender(options, process, log, {});
  REQUIRE_FALSE(open.ok());
  CHECK_THAT(std::string(open.status().message()), Catch::Contains("--address 0.0.0.0: beyond loopback"));
  CHECK_THAT(std::string(open.status().message()), Catch::Contains("--tls-client-ca"));

  ExtenderOptions insecure = options;
  insecure.insecure = true;
  CHECK(BuildExtender(insecure, process, log, {}).ok());
  ExtenderOptions mutual = options;
  mutual.tls_cert = certs->server_cert_file();
  mutual.tls_key = certs->server_key_file();
  mutual.tls_client_ca = certs->ca_cert_file();
  CHECK(BuildExtender(mutual, process, log, {}).ok());

  options.scheduler_name.clear();
  options.address = "127.0.0.1";
  CHECK_THAT(std::string(BuildExtender(options, process, log, {}).status().message()),
             Catch::Contains("--scheduler-name"));
}

// The ops port listens on every address for probes and Prometheus; the endpoints that name pods
// (/preferences, /intents as `serve` registers it on this port, /decisions) answer a peer beyond loopback
// only with the admin token: the wiring of the real routes, not just the guard (bearer_token_test).
TEST_CASE("extender ops port: endpoints that name pods need loopback or the admin token", "[cli][extender]") {
  const std::optional<std::string> address = server::testing::NonLoopbackAddress();
  if (!address) {
    WARN("skipped: this machine has no IPv4 address other than loopback");
    return;
  }
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  kubeclient::testing::FakeApiServer api(*certs);
  REQUIRE(api.valid());
  Scratch scratch;
  for (const bool with_token : {false, true}) {
    CAPTURE(with_token);
    ExtenderOptions options = LoopbackOptions(KubeconfigFor(scratch, api, *certs));
    options.ops_address = "0.0.0.0";
    if (with_token) options.admin_token_file = scratch.path("token");
    ProcessState process;
    spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());
    absl::StatusOr<ExtenderServers> servers = BuildExtender(options, process, log, {});
    REQUIRE(servers.ok());
    RegisterIntentsRoute(*servers->ops, *process.ledger, servers->admin_token);
    absl::StatusOr<int> port = servers->ops->Start();
    REQUIRE(port.ok());
    httplib::Client local("127.0.0.1", *port);
    httplib::Client remote(*address, *port);
    const httplib::Headers admin = {{"Authorization", "Bearer admin-secret"}};
    for (const char* path : {"/preferences", "/intents", "/decisions"}) {
      CAPTURE(path);
      auto refused = remote.Get(path);
      REQUIRE(refused);
      CHECK(refused->status == (with_token ? 401 : 403));
      if (std::string(path) == "/decisions") continue;  // the admin token's alone, even on loopback
      auto on_loopback = local.Get(path);
      REQUIRE(on_loopback);
      CHECK(on_loopback->status == 200);
      if (with_token) {
        auto admitted = remote.Get(path, admin);
        REQUIRE(admitted);
        CHECK(admitted->status == 200);
      }
    }
    auto probe = remote.Get("/readyz");  // what the kubelet and Prometheus read stays open
    REQUIRE(probe);
    CHECK(probe->status != 401);
    CHECK(probe->status != 403);
    servers->ops->Stop();
  }
}

TEST_CASE("extender serves until SIGTERM, then exits 0", "[cli][extender]") {
  // The test process must not die of the signal: block it here, before the server's threads exist.
  REQUIRE(server::BlockShutdownSignals().ok());
  Scratch scratch;
  ExtenderOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.ops_port = 0;
  options.kubeconfig = scratch.path("kubeconfig");
  options.admin_token_file = scratch.path("token");
  std::promise<std::pair<int, int>> ports;
  std::future<int> exit_code = std::async(std::launch::async, [&] {
    return RunExtender(options, [&](int api, int ops) { ports.set_value({api, ops}); });
  });
  const auto [api_port, ops_port] = ports.get_future().get();

  httplib::Client ops("127.0.0.1", ops_port);
  auto ready = ops.Get("/readyz");
  REQUIRE(ready);
  CHECK(ready->status == 200);
  httplib::Client api("127.0.0.1", api_port);
  auto filter = api.Post("/filter", R"({"Pod": {"metadata": {"name": "p"}}, "NodeNames": []})", "application/json");
  REQUIRE(filter);
  CHECK(filter->status == 200);
  auto admin = api.Delete("/admin/pods/some-uid", {{"Authorization", "Bearer admin-secret"}});
  REQUIRE(admin);
  CHECK(admin->status == 200);
  auto metrics = ops.Get("/metrics");
  REQUIRE(metrics);
  CHECK_THAT(metrics->body, Catch::Contains("topofit_http_requests_total{server=\"extender\",route=\"/filter\""));
  CHECK_THAT(metrics->body, Catch::Contains("topofit_build_info{version=\"" + std::string(kVersion) + "\"} 1"));

  REQUIRE(::kill(::getpid(), SIGTERM) == 0);
  CHECK(exit_code.get() == 0);
}

TEST_CASE("extender --live-state keeps the GPU state from the API's nodes and pods, ready once listed",
          "[cli][extender]") {
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  kubeclient::testing::FakeApiServer api(*certs);
  REQUIRE(api.valid());
  api.Upsert(kubeclient::testing::Resource::kNodes, kubeclient::testing::NodeJson("n1", 8));
  nlohmann::json pod = kubeclient::testing::PodJson("ml", "train-0", "n1", "topofit");
  pod["metadata"]["uid"] = "uid-train-0";
  pod["metadata"]["annotations"] = {{"topofit.io/gpu-ids", "6"}};
  api.Upsert(kubeclient::testing::Resource::kPods, pod);

  Scratch scratch;
  ExtenderOptions options = LoopbackOptions(KubeconfigFor(scratch, api, *certs));
  options.live_state = true;
  ProcessState process;
  spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  absl::StatusOr<ExtenderServers> servers = BuildExtender(options, process, log, {});
  REQUIRE(servers.ok());
  REQUIRE(servers->pod_watch != nullptr);
  absl::StatusOr<int> ops_port = servers->ops->Start();
  REQUIRE(ops_port.ok());

  REQUIRE(servers->node_watch->WaitForSync(kubeclient::testing::kPatience));
  REQUIRE(servers->pod_watch->WaitForSync(kubeclient::testing::kPatience));
  REQUIRE(servers->pending_pod_watch->WaitForSync(kubeclient::testing::kPatience));
  CHECK(kubeclient::testing::Eventually([&] { return servers->state->AssignmentOf("uid-train-0").has_value(); }));
  CHECK(servers->state->AssignmentOf("uid-train-0")->second.ToString() == "6");
  httplib::Client ops("127.0.0.1", *ops_port);
  auto ready = ops.Get("/readyz");
  REQUIRE(ready);
  CHECK(ready->status == 200);
  // Pods are listed and watched twice, narrowed: the bound ones (they hold GPUs), and those pending for
  // topofit's scheduler (a bind reads its pod there); never all of them.
  std::set<std::string> pod_selectors;
  for (const auto& request : api.requests()) {
    if (request.target.starts_with("/api/v1/pods")) pod_selectors.insert(request.Param("fieldSelector"));
  }
  CHECK(pod_selectors == std::set<std::string>{"spec.nodeName!=", "spec.schedulerName=topofit,spec.nodeName="});
  servers->ops->Stop();
}

TEST_CASE("extender --live-state --dra: /readyz names each watch that has not listed and the API server's error",
          "[cli][extender]") {
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  kubeclient::testing::FakeApiServer api(*certs);
  REQUIRE(api.valid());
  // Every LIST refused, as with RBAC missing: the watchers back off (0.8 s, 1.6 s, ...) and stay unsynced.
  for (int i = 0; i < 50; ++i) {
    api.Script(403,
               kubeclient::testing::StatusJson(403, "Forbidden", "nodes is forbidden: User \"system:serviceaccount:x\" cannot list"),
               {}, kubeclient::testing::Match::kList);
  }
  Scratch scratch;
  ExtenderOptions options = LoopbackOptions(KubeconfigFor(scratch, api, *certs));
  options.live_state = true;
  options.dra_version = "v1";
  ProcessState process;
  spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  std::atomic<bool> serving{true};
  absl::StatusOr<ExtenderServers> servers = BuildExtender(options, process, log, process.ReadinessChecks(serving));
  REQUIRE(servers.ok());
  absl::StatusOr<int> ops_port = servers->ops->Start();
  REQUIRE(ops_port.ok());
  httplib::Client ops("127.0.0.1", *ops_port);
  std::string body;
  CHECK(kubeclient::testing::Eventually([&] {
    auto ready = ops.Get("/readyz");
    body = ready ? ready->body : "";
    return ready && ready->status == 503 && absl::StrContains(body, "pods not listed yet: ") &&
           absl::StrContains(body, "nodes not listed yet: ") && absl::StrContains(body, "resourceslices not listed yet: ") &&
           absl::StrContains(body, "resourceclaims not listed yet: ");
  }));
  INFO(body);
  CHECK_THAT(body, Catch::StartsWith("[-]informer-sync failed: nodes not listed yet: "));
  CHECK_THAT(body, Catch::Contains("cannot list"));
  CHECK_THAT(body, Catch::EndsWith("\nreadyz check failed\n"));
  auto verbose = ops.Get("/readyz?verbose");
  REQUIRE(verbose);
  CHECK_THAT(verbose->body, Catch::StartsWith("[+]serving ok\n[+]ledger-sync ok\n[-]informer-sync failed: "));
  servers->ops->Stop();
}

TEST_CASE("extender --dra needs --live-state and a version of resource.k8s.io", "[cli][extender]") {
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  kubeclient::testing::FakeApiServer api(*certs);
  REQUIRE(api.valid());
  Scratch scratch;
  ExtenderOptions options = LoopbackOptions(KubeconfigFor(scratch, api, *certs));
  ProcessState process;
  spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  options.dra_version = "v1";
  absl::StatusOr<ExtenderServers> servers = BuildExtender(options, process, log, {});
  CHECK_THAT(std::string(servers.status().message()), Catch::Contains("--dra: needs --live-state"));
  options.live_state = true;
  options.dra_version = "v2";
  servers = BuildExtender(options, process, log, {});
  CHECK_THAT(std::string(servers.status().message()), Catch::Contains("--dra v2: expected v1, v1beta2 or v1beta1"));
}

TEST_CASE("extender --leader-elect: only the Lease holder is ready and binds, shutting down releases the Lease",
          "[cli][extender]") {
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  kubeclient::testing::FakeApiServer api(*certs);
  REQUIRE(api.valid());
  Scratch scratch;
  const std::string kubeconfig = KubeconfigFor(scratch, api, *certs);
  spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  const auto replica = [&](const std::string& identity, ProcessState& process) {
    ExtenderOptions options = LoopbackOptions(kubeconfig);
    options.leader_election.enabled = true;
    options.leader_election.namespace_name = "topofit-system";
    options.leader_election.identity = identity;
    absl::StatusOr<ExtenderServers> servers = BuildExtender(options, process, log, {});
    REQUIRE(servers.ok());
    return std::make_unique<ExtenderServers>(*std::move(servers));
  };
  const std::string lease_path = "/apis/coordination.k8s.io/v1/namespaces/topofit-system/leases/topofit";

  ProcessState process_a, process_b;
  std::unique_ptr<ExtenderServers> a = replica("replica-a", process_a);
  REQUIRE(kubeclient::testing::Eventually([&] { return a->election.elector->IsLeader(); }));
  std::unique_ptr<ExtenderServers> b = replica("replica-b", process_b);
  REQUIRE(kubeclient::testing::Eventually([&] { return b->election.elector->holder() == "replica-a"; }));
  CHECK(api.StoredObject(lease_path)["spec"]["holderIdentity"] == "replica-a");

  const absl::StatusOr<int> a_ops = a->ops->Start();
  const absl::StatusOr<int> b_ops = b->ops->Start();
  const absl::StatusOr<int> b_api = b->api->Start();
  REQUIRE((a_ops.ok() && b_ops.ok() && b_api.ok()));
  auto a_ready = httplib::Client("127.0.0.1", *a_ops).Get("/readyz");
  auto b_ready = httplib::Client("127.0.0.1", *b_ops).Get("/readyz");
  REQUIRE((a_ready && b_ready));
  CHECK(a_ready->status == 200);
  CHECK(b_ready->status == 503);  // the Service sends kube-scheduler to the leader only
  CHECK(b_ready->body == "[-]leader-election failed: not the leader: the Lease is held by replica-a\nreadyz check failed\n");

  auto bind = httplib::Client("127.0.0.1", *b_api)
                  .Post("/bind", R"({"PodName": "p", "PodNamespace": "ml", "PodUID": "u", "Node": "n1"})",
                        "application/json");
  REQUIRE(bind);
  CHECK(bind->status == 200);
  CHECK_THAT(bind->body, Catch::Contains("not the leader"));

  b->api->Stop();
  b->ops->Stop();
  a->ops->Stop();
  a.reset();  // shutting down stops the elector, which hands the Lease back
  CHECK(api.StoredObject(lease_path)["spec"]["holderIdentity"] == "");
}


// With --tls-client-ca only a caller holding a certificate of that CA reaches the verbs: a bind without one
// ends at the TLS handshake, counted, and the API server sees no Binding.
TEST_CASE("extender --tls-client-ca: a bind without a client certificate creates no Binding", "[cli][extender]") {
  std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  kubeclient::testing::FakeApiServer api(*certs);
  REQUIRE(api.valid());
  api.Upsert(kubeclient::testing::Resource::kNodes, kubeclient::testing::NodeJson("n1", 8));
  nlohmann::json pod = kubeclient::testing::PodJson("ml", "trainer", "", "topofit");
  pod["metadata"]["uid"] = "uid-trainer";
  api.Upsert(kubeclient::testing::Resource::kPods, pod);

  Scratch scratch;
  ExtenderOptions options = LoopbackOptions(KubeconfigFor(scratch, api, *certs));
  options.live_state = true;
  options.tls_cert = certs->server_cert_file();
  options.tls_key = certs->server_key_file();
  options.tls_client_ca = certs->ca_cert_file();
  ProcessState process;
  spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  absl::StatusOr<ExtenderServers> servers = BuildExtender(options, process, log, {});
  REQUIRE(servers.ok());
  REQUIRE(servers->node_watch->WaitForSync(kubeclient::testing::kPatience));
  absl::StatusOr<int> port = servers->api->Start();
  REQUIRE(port.ok());
  const std::string bind = R"({"PodName": "trainer", "PodNamespace": "ml", "PodUID": "uid-trainer", "Node": "n1"})";
  const auto bindings = [&] {
    int n = 0;
    for (const auto& request : api.requests()) n += request.method == "POST" && request.target.ends_with("/binding");
    return n;
  };

  httplib::SSLClient anonymous("127.0.0.1", *port);
  anonymous.set_ca_cert_path(certs->ca_cert_file().c_str());
  CHECK_FALSE(anonymous.Post("/bind", bind, "application/json"));
  CHECK(kubeclient::testing::Eventually(
      [&] { return servers->api->metrics().dropped.Value({"extender", "tls-handshake"}) == 1; }));
  CHECK(bindings() == 0);

  httplib::SSLClient stranger("127.0.0.1", *port, certs->stranger_cert_file(), certs->stranger_key_file());
  stranger.set_ca_cert_path(certs->ca_cert_file().c_str());
  CHECK_FALSE(stranger.Post("/bind", bind, "application/json"));
  CHECK(bindings() == 0);

  httplib::SSLClient scheduler("127.0.0.1", *port, certs->client_cert_file(), certs->client_key_file());
  scheduler.set_ca_cert_path(certs->ca_cert_file().c_str());
  auto bound = scheduler.Post("/bind", bind, "application/json");
  REQUIRE(bound);
  CHECK(nlohmann::json::parse(bound->body)["Error"] == "");
  CHECK(bindings() == 1);
  servers->api->Stop();
}

}  // namespace
}  // namespace topofit::cli
