#include "cli/extender_command.h"

#include <atomic>
#include <iostream>

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "kubeclient/config.h"
#include "kubeclient/kube_api.h"
#include "kubeclient/rest_client.h"
#include "ledger/ledger.h"
#include "scheduler/extender.h"
#include "scheduler/extender_http.h"
#include "server/clock.h"
#include "server/http_server.h"
#include "server/logging.h"
#include "server/ops_endpoints.h"
#include "server/shutdown.h"

namespace topofit::cli {
namespace {

// How long a pending pod's preference lives without a refresh (kube-scheduler retries unschedulable pods
// at least every 5 minutes), and how long an intent holds new capacity (CA's max node provision time).
constexpr absl::Duration kPreferenceTtl = absl::Minutes(10);
constexpr absl::Duration kIntentTtl = absl::Minutes(15);

int Fail(absl::string_view what, const absl::Status& status) {
  std::cerr << "topofit extender: " << what << ": " << status.message() << "\n";
  return 1;
}

absl::StatusOr<std::string> ReadAdminToken(const std::string& path) {
  if (path.empty()) return std::string();
  absl::StatusOr<std::string> token = kubeclient::ReadFileToString(path);
  if (!token.ok()) return token.status();
  std::string trimmed(absl::StripAsciiWhitespace(*token));
  if (trimmed.empty()) return absl::InvalidArgumentError(absl::StrCat(path, " is empty"));
  return trimmed;
}

}  // namespace

int RunExtender(const ExtenderOptions& options, const std::function<void(int, int)>& on_listening) {
  // Before any thread exists, so that every thread inherits the mask and the signal reaches sigwait.
  if (absl::Status blocked = server::BlockShutdownSignals(); !blocked.ok()) return Fail("signals", blocked);
  absl::StatusOr<server::LogFormat> format = server::ParseLogFormat(options.log_format);
  if (!format.ok()) return Fail("--log-format", format.status());
  absl::StatusOr<spdlog::level::level_enum> level = server::ParseLogLevel(options.log_level);
  if (!level.ok()) return Fail("--log-level", level.status());
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return Fail("TLS", absl::InvalidArgumentError("--tls-cert and --tls-key go together"));
  }
  if (options.max_body_bytes <= 0) return Fail("--max-body-bytes", absl::InvalidArgumentError("must be positive"));
  absl::StatusOr<std::string> admin_token = ReadAdminToken(options.admin_token_file);
  if (!admin_token.ok()) return Fail("--admin-token-file", admin_token.status());
  server::SetUpLogging({*format, *level});
  spdlog::logger& log = *spdlog::default_logger();

  absl::StatusOr<kubeclient::ClusterConfig> cluster = kubeclient::LoadClusterConfig(options.kubeconfig);
  if (!cluster.ok()) return Fail(options.kubeconfig.empty() ? "in-cluster config" : options.kubeconfig, cluster.status());
  absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> rest = kubeclient::RestClient::Create(*cluster);
  if (!rest.ok()) return Fail("Kubernetes client", rest.status());
  kubeclient::KubeApi kube(**rest);

  const server::RealClock clock;
  server::MetricsRegistry registry;
  std::unique_ptr<ledger::Ledger> ledger = ledger::NewInMemoryLedger(clock, kPreferenceTtl, kIntentTtl);
  std::unique_ptr<scheduler::GpuState> state = scheduler::NewInMemoryGpuState();
  scheduler::ExtenderMetrics metrics = scheduler::ExtenderMetrics::Create(registry);
  scheduler::Extender extender(*state, *ledger, kube, metrics, log);

  server::HttpServerOptions api_options;
  api_options.address = options.address;
  api_options.port = options.port;
  api_options.tls_cert_file = options.tls_cert;
  api_options.tls_key_file = options.tls_key;
  api_options.tls_client_ca_file = options.tls_client_ca;
  api_options.max_body_bytes = static_cast<size_t>(options.max_body_bytes);
  api_options.name = "extender";
  absl::StatusOr<std::unique_ptr<server::HttpServer>> api = server::HttpServer::Create(api_options, registry);
  if (!api.ok()) return Fail("extender server", api.status());
  scheduler::RegisterExtenderRoutes(**api, extender, *admin_token);

  server::HttpServerOptions ops_options;
  ops_options.address = options.address;
  ops_options.port = options.ops_port;
  ops_options.name = "ops";
  absl::StatusOr<std::unique_ptr<server::HttpServer>> ops = server::HttpServer::Create(ops_options, registry);
  if (!ops.ok()) return Fail("ops server", ops.status());
  std::atomic<bool> serving{false};
  server::RegisterOpsEndpoints(**ops, registry, [&serving] { return serving.load(); });
  scheduler::RegisterPreferencesRoute(**ops, *ledger);

  absl::StatusOr<int> ops_port = (*ops)->Start();
  if (!ops_port.ok()) return Fail("ops server", ops_port.status());
  absl::StatusOr<int> api_port = (*api)->Start();
  if (!api_port.ok()) return Fail("extender server", api_port.status());
  serving = true;
  server::LogEvent(log, "listening", {{"extender", absl::StrCat(options.address, ":", *api_port)},
                                      {"tls", (*api)->is_tls() ? "true" : "false"},
                                      {"ops", absl::StrCat(options.address, ":", *ops_port)},
                                      {"admin", admin_token->empty() ? "disabled" : "enabled"}});
  if (on_listening) on_listening(*api_port, *ops_port);

  absl::Status waited = server::WaitForShutdownSignal([&](int signal) {
    server::LogEvent(log, "shutdown", {{"signal", std::to_string(signal)}});
    serving = false;  // readiness fails at once; requests in flight finish inside Stop()
    (*api)->Stop();
    (*ops)->Stop();
  });
  return waited.ok() ? 0 : Fail("waiting for a signal", waited);
}

void AddExtenderCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ExtenderOptions>();
  CLI::App* cmd = app.add_subcommand("extender", "Serve the kube-scheduler extender verbs (filter, prioritize, bind, preempt)");
  cmd->add_option("--address", options->address, "listen address")->capture_default_str();
  cmd->add_option("--port", options->port, "extender port")->capture_default_str()->check(CLI::Range(0, 65535));
  cmd->add_option("--tls-cert", options->tls_cert, "PEM server certificate (with --tls-key: HTTPS)");
  cmd->add_option("--tls-key", options->tls_key, "PEM server key");
  cmd->add_option("--tls-client-ca", options->tls_client_ca, "PEM CA that client certificates must chain to");
  cmd->add_option("--ops-port", options->ops_port, "plain HTTP port for /healthz /readyz /metrics /preferences")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--admin-token-file", options->admin_token_file,
                  "file holding the bearer token for /admin/* (absent: admin endpoints disabled)");
  cmd->add_option("--log-format", options->log_format, "text or json")->capture_default_str();
  cmd->add_option("--log-level", options->log_level, "trace, debug, info, warn, error")->capture_default_str();
  cmd->add_option("--max-body-bytes", options->max_body_bytes, "largest request body accepted")->capture_default_str();
  cmd->add_option("--kubeconfig", options->kubeconfig, "kubeconfig file (empty: in-cluster service account)");
  cmd->callback([options, &exit_code] { exit_code = RunExtender(*options); });
}

}  // namespace topofit::cli
