#include "cli/agent_command.h"

#include <cstdlib>
#include <iostream>
#include <memory>

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "agent/agent.h"
#include "agent/command_runner.h"
#include "cli/build_info.h"
#include "server/process_metrics.h"
#include "cli/decision_history.h"
#include "cli/extender_command.h"
#include "cli/kube_observability.h"
#include "cli/ledger_flags.h"
#include "server/http_server.h"
#include "server/logging.h"
#include "server/metrics.h"
#include "server/ops_endpoints.h"
#include "server/shutdown.h"

namespace topofit::cli {
namespace {

// nvidia-smi answers in well under a second; one that hangs (a wedged driver) is killed after this.
constexpr absl::Duration kNvidiaSmiTimeout = absl::Seconds(20);

int Fail(absl::string_view what, const absl::Status& status) {
  std::cerr << "topofit agent: " << what << (what.empty() ? "" : ": ") << status.message() << "\n";
  return 1;
}

absl::StatusOr<agent::AgentOptions> AgentOptionsFrom(const AgentCommandOptions& options) {
  agent::AgentOptions out;
  out.node_name = options.node_name;
  if (out.node_name.empty()) {
    const char* env = std::getenv("NODE_NAME");
    if (env != nullptr) out.node_name = env;
  }
  out.nvidia_smi = options.nvidia_smi;
  if (options.health_interval_seconds <= 0) return absl::InvalidArgumentError("--health-interval: must be positive");
  if (options.correction_interval_seconds <= 0) {
    return absl::InvalidArgumentError("--correction-interval: must be positive");
  }
  out.health_interval = absl::Seconds(options.health_interval_seconds);
  out.correction_interval = absl::Seconds(options.correction_interval_seconds);
  out.resource_name = options.resource_name;
  out.device_plugin_dir = options.device_plugin_dir;
  out.pod_resources_socket = options.pod_resources_socket;
  absl::StatusOr<agent::DeviceListStrategies> strategies = agent::ParseDeviceListStrategies(options.device_list_strategy);
  if (!strategies.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--device-list-strategy: ", strategies.status().message()));
  }
  out.strategies = *strategies;
  return out;
}

}  // namespace

int RunAgent(const AgentCommandOptions& options, const std::function<void(int)>& on_listening) {
  if (absl::Status blocked = server::BlockShutdownSignals(); !blocked.ok()) return Fail("signals", blocked);
  absl::StatusOr<server::LoggingOptions> logging = ParseLoggingFlags(options.log_format, options.log_level);
  if (!logging.ok()) return Fail("", logging.status());
  absl::StatusOr<agent::AgentOptions> agent_options = AgentOptionsFrom(options);
  if (!agent_options.ok()) return Fail("", agent_options.status());
  server::SetUpLogging(*logging);
  spdlog::logger& log = *spdlog::default_logger();

  server::MetricsRegistry registry;
  RegisterBuildInfo(registry);
  server::RegisterProcessMetrics(registry);
  const server::RealClock clock;
  // The agent's API calls (its pods' watch, the GPU-ids and topology patches) are metrics and logged once
  // per change, as the extender's and the expander's are.
  KubeObservability kube_observability(registry, clock, spdlog::default_logger());
  kubeclient::RestOptions rest_options;
  kube_observability.Observe(rest_options, "agent");
  kube_observability.Observe(agent_options->pod_watch, "node_pods");
  absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> rest = ConnectToCluster(options.kubeconfig, rest_options);
  if (!rest.ok()) return Fail("", rest.status());
  // Declared before the agent, which records to it: destroyed after it.
  DecisionHistory decisions;
  if (!options.decision_db.empty()) {
    decisions = OpenDecisionHistory(options.decision_db, options.decision_db_max_bytes, registry, log);
    agent_options->decisions = decisions.recorder.get();  // null when the file cannot be used: not recorded
    agent_options->clock = &clock;
  }
  agent::ProcessRunner runner(kNvidiaSmiTimeout);
  absl::StatusOr<std::unique_ptr<agent::Agent>> node_agent =
      agent::Agent::Create(*std::move(agent_options), runner, **rest, registry, log);
  if (!node_agent.ok()) return Fail("", node_agent.status());

  absl::StatusOr<std::unique_ptr<server::HttpServer>> ops = server::CreateOpsServer(
      options.address, options.ops_port, registry,
      {{"node-agent", [&node_agent] { return (*node_agent)->NotReadyReason(); }}});
  if (!ops.ok()) return Fail("ops server", ops.status());
  absl::StatusOr<int> ops_port = (*ops)->Start();
  if (!ops_port.ok()) return Fail("ops server", ops_port.status());
  (*node_agent)->Start();
  server::LogEvent(log, "listening", {{"ops", absl::StrCat(options.address, ":", *ops_port)}});
  if (on_listening) on_listening(*ops_port);

  absl::Status waited = server::WaitForShutdownSignal([&](int signal) {
    server::LogEvent(log, "shutdown", {{"signal", signal}});
    (*node_agent)->Stop();  // removes the plugin socket: the kubelet marks the GPUs unavailable for new pods
    (*ops)->Stop();
  });
  return waited.ok() ? 0 : Fail("waiting for a signal", waited);
}

void AddAgentCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<AgentCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "agent", "Run the node agent: the kubelet's GPU device plugin that gives pods the GPUs topofit chose");
  cmd->add_option("--node-name", options->node_name, "this node's name (default: $NODE_NAME)");
  cmd->add_option("--nvidia-smi", options->nvidia_smi, "nvidia-smi to run (a path, or a name on PATH)")
      ->capture_default_str();
  cmd->add_option("--health-interval", options->health_interval_seconds, "seconds between GPU health checks")
      ->capture_default_str();
  cmd->add_option("--resource-name", options->resource_name, "the extended resource to serve")->capture_default_str();
  cmd->add_option("--device-plugin-dir", options->device_plugin_dir, "the kubelet's device-plugin socket folder")
      ->capture_default_str();
  cmd->add_option("--pod-resources-socket", options->pod_resources_socket, "the kubelet's pod-resources socket")
      ->capture_default_str();
  cmd->add_option("--device-list-strategy", options->device_list_strategy,
                  "how Allocate passes the GPUs to the runtime: envvar, cdi-cri, cdi-annotations (comma-separated)")
      ->capture_default_str();
  cmd->add_option("--correction-interval", options->correction_interval_seconds,
                  "seconds between reads of the pod-resources API (also read on every pod event)")
      ->capture_default_str();
  cmd->add_option("--address", options->address, "listen address of the ops port")->capture_default_str();
  cmd->add_option("--ops-port", options->ops_port, "plain HTTP port for /healthz /readyz /metrics")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  AddKubeconfigFlag(*cmd, options->kubeconfig);
  cmd->add_option("--decision-db", options->decision_db,
                  "SQLite file recording the kubelet's GetPreferredAllocation and Allocate answers as decisions "
                  "(topofit explain --db); not recorded when absent")
      ->option_text("PATH");
  AddDecisionDbMaxBytesFlag(*cmd, options->decision_db_max_bytes);
  cmd->add_option("--log-format", options->log_format, "text or json")->capture_default_str();
  cmd->add_option("--log-level", options->log_level, "trace, debug, info, warn, error")->capture_default_str();
  cmd->callback([options, &exit_code] { exit_code = RunAgent(*options); });
}

}  // namespace topofit::cli
