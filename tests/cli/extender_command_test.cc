#include "cli/extender_command.h"

#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>

#include <catch2/catch.hpp>
#include <httplib.h>

#include "server/shutdown.h"
#include "tests/cli/scratch_dir.h"

namespace topofit::cli {
namespace {

// A scratch directory with a kubeconfig and an admin token.
struct Scratch : testing::ScratchDir {
  Scratch() : ScratchDir("topofit-extender-test") { Write("token", "admin-secret\n"); }
};

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

  REQUIRE(::kill(::getpid(), SIGTERM) == 0);
  CHECK(exit_code.get() == 0);
}

}  // namespace
}  // namespace topofit::cli
