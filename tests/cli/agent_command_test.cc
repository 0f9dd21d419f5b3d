#include "cli/agent_command.h"

#include <signal.h>
#include <unistd.h>

#include <functional>
#include <future>

#include <catch2/catch.hpp>
#include <httplib.h>

#include "server/shutdown.h"
#include "tests/kubeclient/eventually.h"
#include "tests/cli/scratch_dir.h"

namespace topofit::cli {
namespace {

AgentCommandOptions LoopbackOptions(const testing::ScratchDir& scratch) {
  AgentCommandOptions options;
  options.node_name = "gpu-node-1";
  options.address = "127.0.0.1";
  options.ops_port = 0;
  options.kubeconfig = scratch.path("kubeconfig");  // an API server nobody answers at
  options.nvidia_smi = scratch.path("no-nvidia-smi");
  options.device_plugin_dir = scratch.path("");
  options.pod_resources_socket = scratch.path("pod-resources.sock");
  return options;
}

TEST_CASE("agent rejects bad options with exit 1", "[cli][agent]") {
  testing::ScratchDir scratch("topofit-agent-cli-test");
  struct Row {
    const char* name;
    std::function<void(AgentCommandOptions&)> change;
  };
  const Row rows[] = {
      {"no node name", [](AgentCommandOptions& o) { o.node_name.clear(); }},
      {"unknown device list strategy", [](AgentCommandOptions& o) { o.device_list_strategy = "volume-mounts"; }},
      {"zero health interval", [](AgentCommandOptions& o) { o.health_interval_seconds = 0; }},
      {"negative correction interval", [](AgentCommandOptions& o) { o.correction_interval_seconds = -1; }},
      {"resource name without a domain", [](AgentCommandOptions& o) { o.resource_name = "gpu"; }},
      {"log format", [](AgentCommandOptions& o) { o.log_format = "xml"; }},
      {"missing kubeconfig", [](AgentCommandOptions& o) { o.kubeconfig = "/nonexistent/kubeconfig"; }},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      AgentCommandOptions options = LoopbackOptions(scratch);
      row.change(options);
      if (options.node_name.empty()) ::unsetenv("NODE_NAME");
      CHECK(RunAgent(options) == 1);
    }
  }
}

TEST_CASE("agent serves its ops port, not ready with the reason, its API calls as metrics, until SIGTERM", "[cli][agent]") {
  REQUIRE(server::BlockShutdownSignals().ok());  // before the agent's threads exist
  testing::ScratchDir scratch("topofit-agent-cli-test");
  std::promise<int> port;
  std::future<int> exit_code = std::async(std::launch::async, [&] {
    return RunAgent(LoopbackOptions(scratch), [&](int ops) { port.set_value(ops); });
  });
  httplib::Client ops("127.0.0.1", port.get_future().get());
  auto healthy = ops.Get("/healthz");
  REQUIRE(healthy);
  CHECK(healthy->status == 200);
  auto ready = ops.Get("/readyz");
  REQUIRE(ready);
  CHECK(ready->status == 503);
  CHECK_THAT(ready->body, Catch::StartsWith("[-]node-agent failed: GPUs not discovered: "));
  auto metrics = ops.Get("/metrics");
  REQUIRE(metrics);
  CHECK_THAT(metrics->body, Catch::Contains("# TYPE topofit_agent_preferred_allocations_total counter"));
  // Its API client and its pods' watch are metrics, as the extender's and the expander's are: the API server
  // at 127.0.0.1:1 refuses every connection.
  const auto metrics_say = [&ops](const std::string& line) {
    return kubeclient::testing::Eventually([&] {
      auto now = ops.Get("/metrics");
      return now && now->body.find(line) != std::string::npos;
    });
  };
  CHECK(metrics_say("topofit_kube_api_requests_total{client=\"agent\",verb=\"GET\",code=\"none\"} "));
  CHECK(metrics_say("topofit_watch_healthy{resource=\"node_pods\"} 0\n"));
  CHECK(metrics_say("topofit_watch_synced{resource=\"node_pods\"} 0\n"));

  REQUIRE(::kill(::getpid(), SIGTERM) == 0);
  CHECK(exit_code.get() == 0);
}

}  // namespace
}  // namespace topofit::cli
