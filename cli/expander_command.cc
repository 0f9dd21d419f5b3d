#include "cli/expander_command.h"

#include <atomic>
#include <cmath>
#include <iostream>
#include <utility>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "cli/ledger_flags.h"
#include "codec/bounded_json.h"
#include "codec/ledger_json.h"
#include "kubeclient/config.h"
#include "server/bearer_token.h"
#include "server/logging.h"
#include "server/ops_endpoints.h"
#include "server/shutdown.h"

namespace topofit::cli {
namespace {

// CA's deadline per call: after it no call in flight can still be of use to CA.
constexpr absl::Duration kGrpcShutdownGrace = absl::Seconds(5);

int Fail(absl::string_view command, const absl::Status& status) {
  std::cerr << "topofit " << command << ": " << status.message() << "\n";
  return 1;
}

void AddExpanderFlags(CLI::App& cmd, ExpanderOptions& options) {
  cmd.add_option("--grpc-port", options.grpc_port, "gRPC port of the expander (BestOptions)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd.add_flag("--insecure", options.insecure,
               "serve gRPC in plaintext (cluster-autoscaler requires TLS; for tests and TLS-terminating proxies)");
  cmd.add_option("--prices-file", options.prices_file,
                 "JSON object of price per node-hour by node group id, e.g. {\"p4d\": 32.77}");
  cmd.add_flag("--no-veto", options.no_veto,
               "when every GPU option would strand a pod, return all options (fail open) instead of none");
  cmd.add_flag("--trust-expander-templates", options.trust_expander_templates,
               "trust the node group templates of callers without a client certificate, so the extender makes "
               "pods wait for groups at size zero; only when nothing but cluster-autoscaler reaches the gRPC "
               "port (a NetworkPolicy): anyone who can call it could then make pods wait for a group that "
               "does not exist (docs/expander.md)");
}

}  // namespace

absl::StatusOr<std::map<std::string, double>> ReadPricesFile(const std::string& path) {
  absl::StatusOr<std::string> text = kubeclient::ReadFileToString(path);
  if (!text.ok()) return text.status();
  // Mounted from a ConfigMap: bounded as one (codec/json_limits.h), since a refusal prints what it read.
  const absl::StatusOr<nlohmann::json> parsed = codec::ParseBoundedJson(*text, codec::kObjectJsonLimits, path);
  if (!parsed.ok()) return parsed.status();
  const nlohmann::json& json = *parsed;
  if (!json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": want an object of node group id -> price"));
  }
  std::map<std::string, double> prices;
  for (const auto& [group, price] : json.items()) {
    if (!price.is_number() || !std::isfinite(price.get<double>()) || price.get<double>() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": price of \"", group, "\" is not a number >= 0: ", price.dump()));
    }
    prices[group] = price.get<double>();
  }
  return prices;
}

namespace {

// --dra: a claim watch of its own feeding the claims the service ranks claim pods by.
absl::Status WatchClaims(const ExpanderOptions& options, ProcessState& process, ExpanderParts& parts) {
  if (absl::Status version = CheckDraVersion(options.dra_version); !version.ok()) return version;
  kubeclient::RestOptions rest_options;
  process.kube_observability.Observe(rest_options, "claims");
  absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> rest = ConnectToCluster(options.kubeconfig, rest_options);
  if (!rest.ok()) return Prefixed("--dra", rest.status());
  parts.claim_rest = *std::move(rest);
  parts.claims = std::make_unique<kubeclient::ClaimCache>();
  decision::DraGpuClasses classes;
  classes.device_classes = options.dra_gpu_classes;
  parts.claim_source = std::make_unique<decision::ClaimSource>(parts.claims->Source(std::move(classes)));
  kubeclient::ListWatchOptions claim_options;
  process.kube_observability.Observe(claim_options, "resourceclaims");
  parts.claim_watch = kubeclient::ListWatcher::ForResourceClaims(*parts.claim_rest, options.dra_version, claim_options,
                                                                 parts.claims->Handler());
  parts.claim_watch->Start();
  parts.service->ReadClaimsFrom(parts.claim_source.get());
  return absl::OkStatus();
}

// --compute-domains: a ComputeDomain watch of its own feeding the domains the service ranks gangs by.
absl::Status WatchComputeDomains(const ExpanderOptions& options, ProcessState& process, ExpanderParts& parts) {
  if (absl::Status version = CheckComputeDomainsVersion(options.compute_domains_version); !version.ok()) return version;
  kubeclient::RestOptions rest_options;
  process.kube_observability.Observe(rest_options, "compute_domains");
  absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> rest = ConnectToCluster(options.kubeconfig, rest_options);
  if (!rest.ok()) return Prefixed("--compute-domains", rest.status());
  parts.domain_rest = *std::move(rest);
  parts.compute_domains = std::make_unique<kubeclient::ComputeDomainCache>();
  parts.compute_domain_source = std::make_unique<decision::ComputeDomainSource>(
      [domains = parts.compute_domains.get()](absl::string_view namespace_name, absl::string_view channel_template) {
        return domains->ByChannelTemplate(namespace_name, channel_template);
      });
  kubeclient::ListWatchOptions domain_options;
  process.kube_observability.Observe(domain_options, "computedomains");
  parts.compute_domain_watch = kubeclient::ListWatcher::ForComputeDomains(
      *parts.domain_rest, options.compute_domains_version, domain_options, parts.compute_domains->Handler());
  parts.compute_domain_watch->Start();
  parts.service->ReadComputeDomainsFrom(parts.compute_domain_source.get());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ExpanderParts> BuildExpander(const ExpanderOptions& options, ProcessState& process,
                                            spdlog::logger& log) {
  expander::ExpanderServiceOptions service_options;
  service_options.policy.veto_when_all_strand = !options.no_veto;
  // With a client CA gRPC admits only peers whose certificate chains to it (expander/grpc_server.h).
  service_options.trust_templates = !options.tls_client_ca.empty() || options.trust_expander_templates;
  absl::StatusOr<decision::CapacityWaitPolicy> wait =
      ParseCapacityWaitFlags(options.expected_node_boot, options.max_topology_wait);
  if (!wait.ok()) return wait.status();
  service_options.policy.capacity_wait = *wait;
  if (!options.prices_file.empty()) {
    absl::StatusOr<std::map<std::string, double>> prices = ReadPricesFile(options.prices_file);
    if (!prices.ok()) return absl::InvalidArgumentError(absl::StrCat("--prices-file: ", prices.status().message()));
    service_options.price_per_node_hour = *std::move(prices);
  }
  ExpanderParts parts;
  parts.metrics = std::make_unique<expander::ExpanderMetrics>(expander::ExpanderMetrics::Create(process.registry));
  parts.service = std::make_unique<expander::ExpanderService>(std::move(service_options), *process.ledger,
                                                              process.clock, *parts.metrics, log);
  if (options.ledger == "api") {  // an API server to write the pods' Events to
    if (absl::Status events = UsePodEvents(options.kubeconfig, process, log); !events.ok()) return events;
  }
  parts.service->RecordDecisionsTo(process.recorder());
  if (!options.dra_version.empty()) {
    if (absl::Status watched = WatchClaims(options, process, parts); !watched.ok()) return watched;
  }
  if (!options.compute_domains_version.empty()) {
    if (absl::Status watched = WatchComputeDomains(options, process, parts); !watched.ok()) return watched;
  }
  parts.grpc.address = options.address;
  parts.grpc.port = options.grpc_port;
  parts.grpc.tls_cert_file = options.tls_cert;
  parts.grpc.tls_key_file = options.tls_key;
  parts.grpc.tls_client_ca_file = options.tls_client_ca;
  parts.grpc.insecure = options.insecure;
  parts.grpc.on_tls_reload = server::ReportTlsReloads(server::TlsReloadsCounter(process.registry), "expander");
  return parts;
}

void RegisterIntentsRoute(server::HttpServer& server, const ledger::Ledger& ledger, std::string admin_token) {
  server.Handle("GET", "/intents",
                server::RequireLoopbackOrAdminToken(std::move(admin_token), [&ledger](const server::HttpRequest&) {
                  return server::JsonResponse(200, codec::IntentsToJson(ledger.Intents()));
                }));
}

int RunExpander(const ExpanderOptions& options, const std::function<void(int, int)>& on_listening) {
  constexpr absl::string_view kCommand = "expander";
  // Before any thread exists (gRPC starts its own), so that every thread inherits the mask.
  if (absl::Status blocked = server::BlockShutdownSignals(); !blocked.ok()) return Fail(kCommand, blocked);
  absl::StatusOr<server::LoggingOptions> logging = ParseLoggingFlags(options.log_format, options.log_level);
  if (!logging.ok()) return Fail(kCommand, logging.status());
  server::SetUpLogging(*logging);
  spdlog::logger& log = *spdlog::default_logger();

  ProcessState process;
  if (absl::Status ledger = UseLedger(options.ledger, options.kubeconfig, process, log); !ledger.ok()) {
    return Fail(kCommand, ledger);
  }
  absl::StatusOr<std::string> admin_token = ReadSecretFile(options.admin_token_file);
  if (!admin_token.ok()) return Fail(kCommand, absl::Status(admin_token.status().code(),
                                                            absl::StrCat("--admin-token-file: ", admin_token.status().message())));
  process.decisions = OpenDecisionHistory(options.decision_db, options.decision_db_max_bytes, process.registry, log);
  absl::StatusOr<ExpanderParts> parts = BuildExpander(options, process, log);
  if (!parts.ok()) return Fail(kCommand, parts.status());
  std::atomic<bool> serving{false};
  server::ReadinessChecks readiness = process.ReadinessChecks(serving);
  if (parts->claim_watch != nullptr) {
    readiness.push_back({"claims-sync", [watch = parts->claim_watch.get()] { return NotListedYet(*watch, "resourceclaims"); }});
  }
  if (parts->compute_domain_watch != nullptr) {
    readiness.push_back({"compute-domains-sync", [watch = parts->compute_domain_watch.get()] {
                           return NotListedYet(*watch, "computedomains");
                         }});
  }
  absl::StatusOr<std::unique_ptr<server::HttpServer>> ops =
      server::CreateOpsServer(options.ops_address, options.ops_port, process.registry, std::move(readiness));
  if (!ops.ok()) return Fail(kCommand, ops.status());
  RegisterIntentsRoute(**ops, *process.ledger, *admin_token);

  absl::StatusOr<int> ops_port = (*ops)->Start();
  if (!ops_port.ok()) return Fail(kCommand, ops_port.status());
  absl::StatusOr<std::unique_ptr<expander::GrpcServer>> grpc = expander::GrpcServer::Start(parts->grpc, *parts->service);
  if (!grpc.ok()) return Fail(kCommand, grpc.status());
  serving = true;
  server::LogEvent(log, "listening", {{"expander", absl::StrCat(options.address, ":", (*grpc)->port())},
                                      {"tls", (*grpc)->is_tls()},
                                      {"ops", absl::StrCat(options.ops_address, ":", *ops_port)}});
  if (on_listening) on_listening((*grpc)->port(), *ops_port);

  absl::Status waited = server::WaitForShutdownSignal([&](int signal) {
    server::LogEvent(log, "shutdown", {{"signal", signal}});
    serving = false;
    (*grpc)->Shutdown(kGrpcShutdownGrace);
    (*ops)->Stop();
  });
  return waited.ok() ? 0 : Fail(kCommand, waited);
}

int RunServe(const ServeOptions& options, const std::function<void(int, int, int)>& on_listening) {
  constexpr absl::string_view kCommand = "serve";
  if (absl::Status blocked = server::BlockShutdownSignals(); !blocked.ok()) return Fail(kCommand, blocked);
  const ExtenderOptions& extender_options = options.extender;
  absl::StatusOr<server::LoggingOptions> logging =
      ParseLoggingFlags(extender_options.log_format, extender_options.log_level);
  if (!logging.ok()) return Fail(kCommand, logging.status());
  server::SetUpLogging(*logging);
  spdlog::logger& log = *spdlog::default_logger();

  // One address, certificate and key for both ports: the Service name both clients use is the same.
  ExpanderOptions expander_options = options.expander;
  expander_options.address = extender_options.address;
  // --insecure: plaintext gRPC, and the extender beyond loopback without client certificates.
  ExtenderOptions extender_checked = extender_options;
  extender_checked.insecure = expander_options.insecure;
  expander_options.tls_cert = extender_options.tls_cert;
  expander_options.tls_key = extender_options.tls_key;
  expander_options.expected_node_boot = extender_options.expected_node_boot;
  expander_options.max_topology_wait = extender_options.max_topology_wait;

  ProcessState process;
  if (absl::Status ledger = UseLedger(extender_options.ledger, extender_options.kubeconfig, process, log);
      !ledger.ok()) {
    return Fail(kCommand, ledger);
  }
  process.decisions = OpenDecisionHistory(extender_options.decision_db, extender_options.decision_db_max_bytes,
                                           process.registry, log);
  std::atomic<bool> serving{false};
  absl::StatusOr<ExtenderServers> extender =
      BuildExtender(extender_checked, process, log, process.ReadinessChecks(serving));
  if (!extender.ok()) return Fail(kCommand, extender.status());
  absl::StatusOr<ExpanderParts> expander = BuildExpander(expander_options, process, log);
  if (!expander.ok()) return Fail(kCommand, expander.status());
  // The extender's claim watch (--dra) serves the ranking too.
  expander->service->ReadClaimsFrom(extender->extender->claim_source());
  expander->service->ReadComputeDomainsFrom(extender->extender->compute_domain_source());
  RegisterIntentsRoute(*extender->ops, *process.ledger, extender->admin_token);

  absl::StatusOr<int> ops_port = extender->ops->Start();
  if (!ops_port.ok()) return Fail(kCommand, ops_port.status());
  absl::StatusOr<int> api_port = extender->api->Start();
  if (!api_port.ok()) return Fail(kCommand, api_port.status());
  absl::StatusOr<std::unique_ptr<expander::GrpcServer>> grpc =
      expander::GrpcServer::Start(expander->grpc, *expander->service);
  if (!grpc.ok()) return Fail(kCommand, grpc.status());
  serving = true;
  server::LogEvent(log, "listening", {{"extender", absl::StrCat(extender_options.address, ":", *api_port)},
                                      {"expander", absl::StrCat(extender_options.address, ":", (*grpc)->port())},
                                      {"tls", extender->api->is_tls()},
                                      {"ops", absl::StrCat(extender_options.ops_address, ":", *ops_port)},
                                      {"admin", extender->admin_token.empty() ? "disabled" : "enabled"}});
  if (on_listening) on_listening(*api_port, (*grpc)->port(), *ops_port);

  absl::Status waited = server::WaitForShutdownSignal([&](int signal) {
    server::LogEvent(log, "shutdown", {{"signal", signal}});
    serving = false;
    (*grpc)->Shutdown(kGrpcShutdownGrace);
    extender->api->Stop();
    extender->ops->Stop();
    if (extender->election.elector != nullptr) extender->election.elector->Stop();  // releases the Lease: a fast failover
  });
  return waited.ok() ? 0 : Fail(kCommand, waited);
}

void AddExpanderCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ExpanderOptions>();
  CLI::App* cmd = app.add_subcommand("expander", "Serve cluster-autoscaler's gRPC expander (--expander=grpc)");
  cmd->add_option("--address", options->address, "listen address of the gRPC expander")->capture_default_str();
  cmd->add_option("--ops-address", options->ops_address, "listen address of the ops port (probes, Prometheus)")
      ->capture_default_str();
  AddExpanderFlags(*cmd, *options);
  cmd->add_option("--tls-cert", options->tls_cert, "PEM server certificate (cluster-autoscaler requires TLS)");
  cmd->add_option("--tls-key", options->tls_key, "PEM server key");
  cmd->add_option("--tls-client-ca", options->tls_client_ca, "PEM CA that client certificates must chain to (mTLS)");
  cmd->add_option("--ops-port", options->ops_port, "plain HTTP port for /healthz /readyz /metrics /intents")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--admin-token-file", options->admin_token_file,
                  "file holding a bearer token that opens /intents beyond loopback (default: loopback only)");
  cmd->add_option("--log-format", options->log_format, "text or json")->capture_default_str();
  cmd->add_option("--log-level", options->log_level, "trace, debug, info, warn, error")->capture_default_str();
  AddKubeconfigFlag(*cmd, options->kubeconfig);
  AddLedgerFlag(*cmd, options->ledger);
  AddDecisionDbFlag(*cmd, options->decision_db, options->decision_db_max_bytes);
  AddCapacityWaitFlags(*cmd, options->expected_node_boot, options->max_topology_wait);
  cmd->add_option("--dra", options->dra_version,
                  "watch resource.k8s.io ResourceClaims at this version (v1; v1beta2 or v1beta1 where the cluster "
                  "serves only those), so pods whose GPUs come from claims are ranked by what the claims ask "
                  "(docs/dra.md)");
  cmd->add_option("--dra-gpu-class", options->dra_gpu_classes,
                  "with --dra: a DeviceClass whose claim requests ask for whole GPUs (repeatable; requests whose "
                  "CEL selector names the driver gpu.nvidia.com count too)")
      ->capture_default_str();
  cmd->add_option("--compute-domains", options->compute_domains_version,
                  "watch NVIDIA's ComputeDomains (resource.nvidia.com at this version: v1beta1, or v1beta2 from the "
                  "driver that serves it), so each domain's pods are ranked as one gang in one NVLink domain, a node "
                  "each (docs/gangs.md)");
  cmd->callback([options, &exit_code] { exit_code = RunExpander(*options); });
}

void AddServeCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "Serve the scheduler extender and the cluster-autoscaler expander in one process, sharing the ledger");
  AddExtenderFlags(*cmd, options->extender);
  AddExpanderFlags(*cmd, options->expander);
  cmd->add_option("--grpc-tls-client-ca", options->expander.tls_client_ca,
                  "PEM CA that gRPC client certificates must chain to (mTLS on the expander port)");
  cmd->callback([options, &exit_code] { exit_code = RunServe(*options); });
}

}  // namespace topofit::cli
