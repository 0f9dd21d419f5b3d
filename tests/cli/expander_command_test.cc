#include "cli/expander_command.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

#include <catch2/catch.hpp>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "proto/expander.grpc.pb.h"
#include "server/shutdown.h"
#include "spdlog/sinks/null_sink.h"
#include "tests/cli/scratch_dir.h"
#include "tests/codec/hostile_json.h"
#include "tests/expander/answer_message.h"
#include "tests/kube/status_matchers.h"

namespace topofit::cli {
namespace {

// A scratch directory with prices files and a kubeconfig (for `serve`).
struct Scratch : testing::ScratchDir {
  Scratch() : ScratchDir("topofit-expander-test") {
    Write("prices.json", R"({"p4d": 32.77, "g5": 16.288})");
    Write("not-json", "p4d: 32.77");
    Write("negative.json", R"({"p4d": -1})");
    Write("string.json", R"({"p4d": "32.77"})");
    Write("array.json", R"([32.77])");
  }
};

// One NVSwitch node group and one 4-GPU pod that needs NVLink, as CA >= 1.35 sends them.
::grpcplugin::BestOptionsRequest OneGpuOption() {
  ::k8s::io::api::core::v1::Node node;
  node.mutable_metadata()->set_name("template-node-for-p4d-1");
  (*node.mutable_metadata()->mutable_labels())["node.kubernetes.io/instance-type"] = "p4d.24xlarge";
  (*node.mutable_status()->mutable_allocatable())["nvidia.com/gpu"].set_string("8");
  ::k8s::io::api::core::v1::Pod pod;
  pod.mutable_metadata()->set_name("trainer");
  pod.mutable_metadata()->set_uid("uid-trainer");
  (*pod.mutable_metadata()->mutable_annotations())["topofit.io/min-link"] = "NV";
  (*pod.mutable_spec()->add_containers()->mutable_resources()->mutable_requests())["nvidia.com/gpu"].set_string("4");
  ::grpcplugin::BestOptionsRequest request;
  (*request.mutable_nodebytesmap())["p4d"] = node.SerializeAsString();
  ::grpcplugin::Option* option = request.add_options();
  option->set_nodegroupid("p4d");
  option->set_nodecount(1);
  option->add_podbytes(pod.SerializeAsString());
  return request;
}

::grpc::Status CallPlaintext(int port, ::grpcplugin::BestOptionsResponse* response) {
  auto channel = ::grpc::CreateChannel("127.0.0.1:" + std::to_string(port), ::grpc::InsecureChannelCredentials());
  ::grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  return ::grpcplugin::Expander::NewStub(channel)->BestOptions(&context, OneGpuOption(), response);
}

TEST_CASE("expander rejects bad options with exit 1", "[cli][expander]") {
  // gRPC starts threads of its own; they must not take the SIGTERM a later test sends.
  REQUIRE(server::BlockShutdownSignals().ok());
  Scratch scratch;
  struct Row {
    const char* name;
    std::function<void(ExpanderOptions&)> change;
  };
  const Row rows[] = {
      {"log format", [](ExpanderOptions& o) { o.log_format = "xml"; }},
      {"log level", [](ExpanderOptions& o) { o.log_level = "loud"; }},
      {"neither TLS nor --insecure", [](ExpanderOptions& o) { o.insecure = false; }},
      {"--insecure with a certificate", [](ExpanderOptions& o) { o.tls_cert = o.tls_key = "/tmp/cert.pem"; }},
      {"unreadable certificate",
       [](ExpanderOptions& o) { o.insecure = false, o.tls_cert = o.tls_key = "/nonexistent.pem"; }},
      {"missing prices file", [](ExpanderOptions& o) { o.prices_file = "/nonexistent/prices.json"; }},
      {"prices not JSON", [&](ExpanderOptions& o) { o.prices_file = scratch.path("not-json"); }},
      {"negative price", [&](ExpanderOptions& o) { o.prices_file = scratch.path("negative.json"); }},
      {"price as a string", [&](ExpanderOptions& o) { o.prices_file = scratch.path("string.json"); }},
      {"prices not an object", [&](ExpanderOptions& o) { o.prices_file = scratch.path("array.json"); }},
      {"unknown ledger", [](ExpanderOptions& o) { o.ledger = "disk"; }},
      {"--ledger=api without a kubeconfig",
       [](ExpanderOptions& o) { o.ledger = "api", o.kubeconfig = "/nonexistent/kubeconfig"; }},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      ExpanderOptions options;
      options.address = "127.0.0.1";
      options.grpc_port = options.ops_port = 0;
      options.insecure = true;
      row.change(options);
      CHECK(RunExpander(options) == 1);
    }
  }
}

TEST_CASE("the prices file is an object of node group id -> price", "[cli][expander]") {
  Scratch scratch;
  absl::StatusOr<std::map<std::string, double>> prices = ReadPricesFile(scratch.path("prices.json"));
  REQUIRE(prices.ok());
  CHECK(*prices == std::map<std::string, double>{{"g5", 16.288}, {"p4d", 32.77}});
}

// The refusal of a price prints the value it read: of 100,000 nested arrays that was a recursion as deep
// (a crash), so the text is bounded before a document is built from it.
TEST_CASE("a prices file beyond the limits is refused before it is read", "[cli][expander]") {
  Scratch scratch;
  scratch.Write("deep.json",
                topofit::testing::WithRawMember({{"p4d", 32.77}}, "g5", topofit::testing::NestedArrays(100'000)));
  const std::string path = scratch.path("deep.json");
  CHECK_STATUS(ReadPricesFile(path), absl::StatusCode::kInvalidArgument,
               absl::StrCat(path, ": JSON nested deeper than 64 levels"));
}

// gRPC's certificate watcher reports nothing: the expander's own look at the files is what counts reloads.
TEST_CASE("expander counts its gRPC certificate reloads in topofit_tls_reloads_total", "[cli][expander]") {
  ExpanderOptions options;
  ProcessState process;
  spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  absl::StatusOr<ExpanderParts> parts = BuildExpander(options, process, log);
  REQUIRE(parts.ok());
  REQUIRE(parts->grpc.on_tls_reload);
  parts->grpc.on_tls_reload(absl::OkStatus());
  parts->grpc.on_tls_reload(absl::InvalidArgumentError("key does not match"));
  const std::string metrics = process.registry.Render();
  CHECK_THAT(metrics, Catch::Contains("topofit_tls_reloads_total{server=\"expander\",result=\"ok\"} 1\n") &&
                          Catch::Contains("topofit_tls_reloads_total{server=\"expander\",result=\"failed\"} 1\n"));
}

// CA sends no client certificate, so only a client CA (gRPC then admits verified peers alone) or the
// operator's word makes the templates a caller sends trusted (docs/expander.md).
TEST_CASE("expander records the templates of its callers trusted only with --tls-client-ca or --trust-expander-templates",
          "[cli][expander]") {
  struct Row {
    const char* name;
    std::string tls_client_ca;
    bool trust_expander_templates;
    bool trusted;
  };
  const Row row = GENERATE(Row{"neither", "", false, false}, Row{"a client CA", "client-ca.pem", false, true},
                           Row{"the operator's word", "", true, true});
  INFO(row.name);
  ExpanderOptions options;
  options.tls_client_ca = row.tls_client_ca;  // read when the server starts, not here
  options.trust_expander_templates = row.trust_expander_templates;
  ProcessState process;
  spdlog::logger log("test", std::make_shared<spdlog::sinks::null_sink_mt>());
  absl::StatusOr<ExpanderParts> parts = BuildExpander(options, process, log);
  REQUIRE(parts.ok());
  ::grpcplugin::BestOptionsRequest request;
  ::k8s::io::api::core::v1::Node& p4d = (*request.mutable_nodemap())["p4d"];
  (*p4d.mutable_metadata()->mutable_labels())["node.kubernetes.io/instance-type"] = "p4d.24xlarge";
  (*p4d.mutable_status()->mutable_allocatable())["nvidia.com/gpu"].set_string("8");
  request.add_options()->set_nodegroupid("p4d");
  REQUIRE(topofit::testing::AnswerMessage(*parts->service, request, {}).ok());
  const std::map<std::string, ledger::NodeGroupTemplate> groups = process.ledger->NodeGroups();
  REQUIRE(groups.count("p4d") == 1);
  CHECK(groups.at("p4d").trusted == row.trusted);
}

TEST_CASE("expander serves until SIGTERM, then exits 0", "[cli][expander]") {
  REQUIRE(server::BlockShutdownSignals().ok());
  Scratch scratch;
  ExpanderOptions options;
  options.address = "127.0.0.1";
  options.grpc_port = options.ops_port = 0;
  options.insecure = true;
  options.prices_file = scratch.path("prices.json");
  std::promise<std::pair<int, int>> ports;
  std::future<int> exit_code = std::async(std::launch::async, [&] {
    return RunExpander(options, [&](int grpc, int ops) { ports.set_value({grpc, ops}); });
  });
  const auto [grpc_port, ops_port] = ports.get_future().get();

  ::grpcplugin::BestOptionsResponse response;
  const ::grpc::Status status = CallPlaintext(grpc_port, &response);
  INFO(status.error_message());
  REQUIRE(status.ok());
  REQUIRE(response.options_size() == 1);
  CHECK(response.options(0).nodegroupid() == "p4d");

  httplib::Client ops("127.0.0.1", ops_port);
  auto ready = ops.Get("/readyz");
  REQUIRE(ready);
  CHECK(ready->status == 200);
  auto intents = ops.Get("/intents");
  REQUIRE(intents);
  CHECK(intents->status == 200);
  CHECK_THAT(intents->body, Catch::Contains("p4d") && Catch::Contains("uid-trainer"));
  auto metrics = ops.Get("/metrics");
  REQUIRE(metrics);
  CHECK_THAT(metrics->body, Catch::Contains("topofit_expander_calls_total{result=\"ok\"} 1"));

  REQUIRE(::kill(::getpid(), SIGTERM) == 0);
  CHECK(exit_code.get() == 0);
}

TEST_CASE("serve runs the extender and the expander on one ledger until SIGTERM", "[cli][serve]") {
  REQUIRE(server::BlockShutdownSignals().ok());
  Scratch scratch;
  ServeOptions options;
  options.extender.address = "127.0.0.1";
  options.extender.port = options.extender.ops_port = 0;
  options.extender.kubeconfig = scratch.path("kubeconfig");
  options.expander.grpc_port = 0;
  options.expander.insecure = true;
  std::promise<std::tuple<int, int, int>> ports;
  std::future<int> exit_code = std::async(std::launch::async, [&] {
    return RunServe(options, [&](int api, int grpc, int ops) { ports.set_value({api, grpc, ops}); });
  });
  const auto [api_port, grpc_port, ops_port] = ports.get_future().get();

  httplib::Client api("127.0.0.1", api_port);
  auto filter = api.Post("/filter", R"({"Pod": {"metadata": {"name": "p"}}, "NodeNames": []})", "application/json");
  REQUIRE(filter);
  CHECK(filter->status == 200);
  ::grpcplugin::BestOptionsResponse response;
  REQUIRE(CallPlaintext(grpc_port, &response).ok());

  // One ops port for both, one registry, one ledger: the expander's intent is on the extender's ops port.
  httplib::Client ops("127.0.0.1", ops_port);
  auto intents = ops.Get("/intents");
  REQUIRE(intents);
  CHECK_THAT(intents->body, Catch::Contains("uid-trainer"));
  auto preferences = ops.Get("/preferences");
  REQUIRE(preferences);
  CHECK(preferences->status == 200);
  auto metrics = ops.Get("/metrics");
  REQUIRE(metrics);
  CHECK_THAT(metrics->body, Catch::Contains("topofit_expander_calls_total{result=\"ok\"} 1") &&
                                Catch::Contains("topofit_http_requests_total{server=\"extender\",route=\"/filter\""));

  REQUIRE(::kill(::getpid(), SIGTERM) == 0);
  CHECK(exit_code.get() == 0);
}

}  // namespace
}  // namespace topofit::cli
