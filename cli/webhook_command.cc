#include "cli/webhook_command.h"

#include <atomic>
#include <iostream>
#include <memory>

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/extender_command.h"
#include "cli/ledger_flags.h"
#include "cli/process_state.h"
#include "codec/node_topology.h"
#include "kubeclient/config.h"
#include "kubeclient/kube_api.h"
#include "kubeclient/node_groups_config_map.h"
#include "server/http_server.h"
#include "server/logging.h"
#include "server/ops_endpoints.h"
#include "server/shutdown.h"
#include "server/tls_context.h"
#include "webhook/webhook_http.h"

namespace topofit::cli {
namespace {

int Fail(const absl::Status& status) {
  std::cerr << "topofit webhook: " << status.message() << "\n";
  return 1;
}

absl::Status CheckOptions(const WebhookOptions& options) {
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError("TLS: --tls-cert and --tls-key go together");
  }
  if (options.tls_cert.empty() && !options.insecure) {
    return absl::InvalidArgumentError(
        "TLS: the API server calls admission webhooks over HTTPS only; give --tls-cert and --tls-key (or --insecure "
        "behind a TLS-terminating proxy)");
  }
  if (options.max_body_bytes <= 0) return absl::InvalidArgumentError("--max-body-bytes: must be positive");
  return absl::OkStatus();
}

}  // namespace

int RunWebhook(const WebhookOptions& options, const std::function<void(int, int)>& on_listening) {
  // Before any thread exists, so that every thread inherits the mask and the signal reaches sigwait.
  if (absl::Status blocked = server::BlockShutdownSignals(); !blocked.ok()) return Fail(Prefixed("signals", blocked));
  if (absl::Status checked = CheckOptions(options); !checked.ok()) return Fail(checked);
  absl::Duration poll;
  if (!absl::ParseDuration(options.node_groups_poll, &poll) || poll <= absl::ZeroDuration()) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("--node-groups-poll ", options.node_groups_poll, ": expected a positive duration such as 30s")));
  }
  absl::StatusOr<server::LoggingOptions> logging = ParseLoggingFlags(options.log_format, options.log_level);
  if (!logging.ok()) return Fail(logging.status());
  server::SetUpLogging(*logging);
  spdlog::logger& log = *spdlog::default_logger();

  ProcessState process;
  // The servers first: a certificate that does not load fails before anything reaches the API server.
  server::HttpServerOptions api_options;
  api_options.address = options.address;
  api_options.port = options.port;
  api_options.tls_cert_file = options.tls_cert;
  api_options.tls_key_file = options.tls_key;
  api_options.max_body_bytes = static_cast<size_t>(options.max_body_bytes);
  api_options.name = "webhook";
  absl::StatusOr<std::unique_ptr<server::HttpServer>> api = server::HttpServer::Create(api_options, process.registry);
  if (!api.ok()) return Fail(Prefixed("webhook server", api.status()));
  server::HttpServerOptions ops_options;
  ops_options.address = options.ops_address;
  ops_options.port = options.ops_port;
  ops_options.name = "ops";
  absl::StatusOr<std::unique_ptr<server::HttpServer>> ops = server::HttpServer::Create(ops_options, process.registry);
  if (!ops.ok()) return Fail(Prefixed("ops server", ops.status()));

  kubeclient::RestOptions rest_options;
  process.kube_observability.Observe(rest_options, "webhook");
  absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> rest = ConnectToCluster(options.kubeconfig, rest_options);
  if (!rest.ok()) return Fail(rest.status());
  kubeclient::KubeApi kube(**rest);
  kubeclient::NodeGroupsConfigMapOptions groups_options;
  groups_options.namespace_name = options.namespace_name.empty() ? kubeclient::OwnNamespace() : options.namespace_name;
  groups_options.poll_interval = poll;
  kubeclient::NodeGroupsConfigMap node_groups(kube, process.clock, log, groups_options);
  // Read once before serving, so that the first pods admitted already see the groups (the reader thread
  // reads again at once: one more GET at start-up).
  if (absl::Status read = node_groups.Refresh(); !read.ok()) {
    server::LogEvent(log, "node_groups_unread",
                     {{"config_map", absl::StrCat(groups_options.namespace_name, "/", groups_options.name)},
                      {"error", std::string(read.message())}},
                     spdlog::level::warn);
  }
  node_groups.Start();

  codec::TopologyResolver topologies;
  webhook::WebhookMetrics metrics = webhook::WebhookMetrics::Create(process.registry);
  // Untrusted templates too: the terms the webhook writes only add groups a pod may use, so a forged
  // template widens a pod's affinity rather than keep it off a real node (docs/webhook.md).
  webhook::RegisterWebhookRoute(
      **api, [&node_groups] { return ledger::TemplatesOf(node_groups.Live(), ledger::TemplateTrust::kAny); }, topologies,
      metrics, log);
  std::atomic<bool> serving{false};
  server::RegisterOpsEndpoints(**ops, process.registry, process.ReadinessChecks(serving));

  absl::StatusOr<int> ops_port = (*ops)->Start();
  if (!ops_port.ok()) return Fail(Prefixed("ops server", ops_port.status()));
  absl::StatusOr<int> port = (*api)->Start();
  if (!port.ok()) return Fail(Prefixed("webhook server", port.status()));
  serving = true;
  server::LogEvent(log, "listening", {{"webhook", absl::StrCat(options.address, ":", *port)},
                                      {"tls", (*api)->is_tls()},
                                      {"ops", absl::StrCat(options.ops_address, ":", *ops_port)},
                                      {"node_groups", absl::StrCat(groups_options.namespace_name, "/", groups_options.name)}});
  if (on_listening) on_listening(*port, *ops_port);

  absl::Status waited = server::WaitForShutdownSignal([&](int signal) {
    server::LogEvent(log, "shutdown", {{"signal", signal}});
    serving = false;  // readiness fails at once; reviews in flight finish inside Stop()
    (*api)->Stop();
    (*ops)->Stop();
  });
  return waited.ok() ? 0 : Fail(Prefixed("waiting for a signal", waited));
}

void AddWebhookCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<WebhookOptions>();
  CLI::App* cmd = app.add_subcommand(
      "webhook", "Serve the mutating admission webhook that writes the node affinity of pods requiring a GPU topology");
  cmd->add_option("--address", options->address, "listen address of the webhook")->capture_default_str();
  cmd->add_option("--port", options->port, "webhook port (HTTPS, POST /mutate)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--tls-cert", options->tls_cert, "PEM server certificate (the API server calls webhooks over HTTPS)");
  cmd->add_option("--tls-key", options->tls_key, "PEM server key");
  cmd->add_flag("--insecure", options->insecure, "serve plain HTTP (for tests and TLS-terminating proxies)");
  cmd->add_option("--ops-address", options->ops_address, "listen address of the ops port")->capture_default_str();
  cmd->add_option("--ops-port", options->ops_port, "plain HTTP port for /livez /readyz /metrics")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--log-format", options->log_format, "text or json")->capture_default_str();
  cmd->add_option("--log-level", options->log_level, "trace, debug, info, warn, error")->capture_default_str();
  cmd->add_option("--max-body-bytes", options->max_body_bytes, "largest request body accepted")->capture_default_str();
  AddKubeconfigFlag(*cmd, options->kubeconfig);
  cmd->add_option("--namespace", options->namespace_name,
                  "namespace of the ConfigMap topofit-node-groups the expander publishes (default: $POD_NAMESPACE, "
                  "else the service account's, else default)");
  cmd->add_option("--node-groups-poll", options->node_groups_poll, "how often that ConfigMap is read again")
      ->capture_default_str();
  cmd->callback([options, &exit_code] { exit_code = RunWebhook(*options); });
}

}  // namespace topofit::cli
