#include "cli/webhook_command.h"

#include <signal.h>
#include <unistd.h>

#include <future>
#include <utility>

#include <catch2/catch.hpp>
#include <httplib.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "codec/kube_json.h"
#include "kubeclient/node_groups_config_map.h"
#include "server/shutdown.h"
#include "tests/cli/scratch_dir.h"
#include "tests/kube/builders.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/test_certs.h"
#include "tests/webhook/admission_fixtures.h"

namespace topofit::cli {
namespace {

using Json = nlohmann::json;

std::string Fixture(const std::string& name) { return webhook::testing::AdmissionFixture(name); }

// The ConfigMap the expander publishes, holding the p4d group's template, seen now.
Json NodeGroupsConfigMap() {
  const kube::Node p4d =
      kube::testing::MakeNode().name("template-node-for-p4d").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8);
  const Json groups = Json::array({{{"nodeGroup", "p4d"},
                                    {"seen", absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone())},
                                    {"template", codec::NodeTemplateToJson(p4d)}}});
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", kubeclient::kNodeGroupsConfigMap}, {"namespace", "topofit-system"}}},
          {"data", {{kubeclient::kNodeGroupsKey, groups.dump()}}}};
}

TEST_CASE("webhook rejects bad options with exit 1", "[cli][webhook]") {
  REQUIRE(server::BlockShutdownSignals().ok());
  testing::ScratchDir scratch("topofit-webhook-options-test");
  struct Row {
    const char* name;
    std::function<void(WebhookOptions&)> change;
  };
  const Row rows[] = {
      {"neither TLS nor --insecure", [](WebhookOptions& o) { o.insecure = false; }},
      {"a certificate without its key", [](WebhookOptions& o) { o.tls_cert = "/tmp/cert.pem"; }},
      {"unreadable certificate", [](WebhookOptions& o) { o.tls_cert = o.tls_key = "/nonexistent.pem"; }},
      {"log format", [](WebhookOptions& o) { o.log_format = "xml"; }},
      {"poll interval", [](WebhookOptions& o) { o.node_groups_poll = "soon"; }},
      {"body limit", [](WebhookOptions& o) { o.max_body_bytes = 0; }},
      {"no kubeconfig", [](WebhookOptions& o) { o.kubeconfig = "/nonexistent/kubeconfig"; }},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      WebhookOptions options;
      options.port = options.ops_port = 0;
      options.insecure = true;
      options.kubeconfig = scratch.path("kubeconfig");
      options.namespace_name = "topofit-system";
      row.change(options);
      CHECK(RunWebhook(options) == 1);
    }
  }
}

TEST_CASE("webhook serves AdmissionReviews over TLS from the published node groups until SIGTERM", "[cli][webhook]") {
  REQUIRE(server::BlockShutdownSignals().ok());
  const std::unique_ptr<topofit::testing::TestCerts> certs = topofit::testing::TestCerts::Create().value();
  kubeclient::testing::FakeApiServer api(*certs);
  REQUIRE(api.valid());
  api.PutStoredObject("/api/v1/namespaces/topofit-system/configmaps/topofit-node-groups", NodeGroupsConfigMap());
  testing::ScratchDir scratch("topofit-webhook-test");
  scratch.Write("kubeconfig", testing::ScratchDir::Kubeconfig(
                                  absl::StrCat("server: \"", api.url(), "\", certificate-authority: \"", certs->ca_cert_file(), "\"")));

  WebhookOptions options;
  options.port = options.ops_port = 0;
  options.tls_cert = certs->server_cert_file();
  options.tls_key = certs->server_key_file();
  options.kubeconfig = scratch.path("kubeconfig");
  options.namespace_name = "topofit-system";
  options.max_body_bytes = 64 << 10;
  std::promise<std::pair<int, int>> ports;
  std::future<int> exit_code = std::async(std::launch::async, [&] {
    return RunWebhook(options, [&](int port, int ops) { ports.set_value({port, ops}); });
  });
  const auto [port, ops_port] = ports.get_future().get();
  // SIGTERM once, also when a REQUIRE ends the test early (the future waits for the server to stop); a
  // second one would stay pending for the next test's server.
  bool stopped = false;
  const auto stop = [&] {
    if (!std::exchange(stopped, true)) ::kill(::getpid(), SIGTERM);
  };
  struct StopOnExit {
    std::function<void()> stop;
    ~StopOnExit() { stop(); }
  } stop_on_exit{stop};

  httplib::SSLClient client("127.0.0.1", port);
  client.set_ca_cert_path(certs->ca_cert_file().c_str());
  client.enable_server_certificate_verification(true);

  SECTION("a pod requiring NVLink gets the p4d affinity; bad bodies get 400 or 413 and no patch") {
    auto reviewed = client.Post("/mutate", Fixture("required-pod.json"), "application/json");
    REQUIRE(reviewed);
    CHECK(reviewed->status == 200);
    const Json response = Json::parse(reviewed->body)["response"];
    CHECK(response["uid"] == "705ab4f5-6393-11e8-b7cc-42010a800002");
    CHECK(response["allowed"] == true);
    std::string patch;
    REQUIRE(absl::Base64Unescape(response["patch"].get<std::string>(), &patch));
    CHECK(Json::parse(patch) == Json::parse(Fixture("required-pod-response.json"))["response"]["patch"]);

    for (const char* bad : {"malformed.json", "wrong-api-version.json", "wrong-kind.json", "missing-uid.json"}) {
      INFO(bad);
      auto refused = client.Post("/mutate", Fixture(bad), "application/json");
      REQUIRE(refused);
      CHECK(refused->status == 400);
      CHECK_FALSE(Json::parse(refused->body).contains("response"));
      CHECK(Json::parse(refused->body)["error"].get<std::string>().size() > 0);
    }
    // Past --max-body-bytes: refused from Content-Length, unread. httplib writes the whole body before it
    // reads, so the early 413 may reach it as a failed write instead; the server's count says which it sent.
    auto huge = client.Post("/mutate", std::string(65 << 10, ' '), "application/json");
    if (huge) CHECK(huge->status == 413);

    httplib::Client ops("127.0.0.1", ops_port);
    auto ready = ops.Get("/readyz");
    REQUIRE(ready);
    CHECK(ready->status == 200);
    auto metrics = ops.Get("/metrics");
    REQUIRE(metrics);
    CHECK_THAT(metrics->body,
               Catch::Contains("topofit_webhook_reviews_total{outcome=\"patched\"} 1") &&
                   Catch::Contains("topofit_webhook_invalid_reviews_total 4") &&
                   Catch::Contains("topofit_http_requests_total{server=\"webhook\",route=\"/mutate\",code=\"413\"} 1"));
  }
  SECTION("plain HTTP on the TLS port is refused") {
    httplib::Client plain("127.0.0.1", port);
    auto answered = plain.Post("/mutate", Fixture("required-pod.json"), "application/json");
    CHECK((!answered || answered->status != 200));
  }

  stop();
  CHECK(exit_code.get() == 0);
}

}  // namespace
}  // namespace topofit::cli
