#include "cli/extender_command.h"

#include <algorithm>
#include <atomic>
#include <iostream>

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "cli/build_info.h"
#include "cli/ledger_flags.h"
#include "cli/restart_notify_flags.h"
#include "history/decisions_http.h"
#include "kubeclient/capacity_buffers.h"
#include "kubeclient/config.h"
#include "kubeclient/headroom_writer.h"
#include "kubeclient/kube_api.h"
#include "kubeclient/rest_client.h"
#include "ledger/ledger.h"
#include "mcp/http.h"
#include "scheduler/extender.h"
#include "scheduler/extender_http.h"
#include "server/clock.h"
#include "server/http_server.h"
#include "server/logging.h"
#include "server/ops_endpoints.h"
#include "server/shutdown.h"

namespace topofit::cli {
namespace {

int Fail(const absl::Status& status) {
  std::cerr << "topofit extender: " << status.message() << "\n";
  return 1;
}

// Counts each node the state drops in counter `name` and logs it at debug as `event`.
std::function<void(const std::string&)> CountNodesDropped(server::MetricsRegistry& registry, const std::string& name,
                                                           const std::string& help, std::string event) {
  return [dropped = &registry.AddCounter(name, help, {}), event = std::move(event)](const std::string& node) {
    dropped->Inc();
    server::LogEvent(*spdlog::default_logger(), event, {{"node", node}}, spdlog::level::debug);
  };
}

// Nodes from requests evicted at the node table's limit to make room for new ones; counted and logged.
scheduler::GpuStateLimits NodeLimits(server::MetricsRegistry& registry) {
  scheduler::GpuStateLimits limits;
  limits.on_evicted = CountNodesDropped(registry, "topofit_extender_nodes_evicted_total",
                                        "Nodes learned from filter requests, without pods topofit knows of, evicted "
                                        "at the node limit to make room for new ones, the least recently named first.",
                                        "node_evicted");
  return limits;
}

// Without --live-state nodes come only from filter requests: one no request named for 10 minutes (the
// preference TTL) and without pods topofit knows of is forgotten; counted and logged.
scheduler::GpuStateLimits FilterFedNodeLimits(server::MetricsRegistry& registry) {
  scheduler::GpuStateLimits limits = NodeLimits(registry);
  limits.forget_unseen_after = ledger::Lifetimes().preference;
  limits.on_forgotten = CountNodesDropped(registry, "topofit_extender_nodes_forgotten_total",
                                          "Nodes no filter request named for 10 minutes, without pods topofit knows "
                                          "of, forgotten (without --live-state).",
                                          "node_forgotten");
  return limits;
}

// How many binds the extender takes at once (running on the bind pool's threads or waiting for one); more
// get 503 at once, and kube-scheduler retries the pod. kube-scheduler binds each pod in a goroutine of its
// own, with no cap, and gives the extender's bind its httpTimeout (5 s in manifests/, the upstream default)
// before it gives up and retries. A bind makes `api_calls_per_bind` calls through the API client (the
// Binding carrying its annotations, after a GET of the pod unless the watch of pending pods holds it), so
// within that time the client's rate limit lets at most (burst + qps x 5 s) / calls binds finish; a bind
// admitted beyond them would answer after kube-scheduler gave up on it. At the defaults (100 + 50 x 5) / 1
// = 350 with --live-state, 175 without. Never fewer than the pool's threads, never more than the
// connections the server keeps open (each waiting bind holds one).
int BindsAdmitted(double kube_api_qps, int kube_api_burst, int api_calls_per_bind, const server::HttpServerOptions& server) {
  constexpr double kSchedulerBindTimeoutSeconds = 5;
  const double finishing = (kube_api_burst + kube_api_qps * kSchedulerBindTimeoutSeconds) / api_calls_per_bind;
  return static_cast<int>(std::clamp<double>(finishing, server.blocking_threads, server.max_connections));
}

bool IsLoopback(const std::string& address) {
  return address == "localhost" || address == "::1" || address.starts_with("127.");
}

}  // namespace

absl::StatusOr<std::string> ReadSecretFile(const std::string& path) {
  if (path.empty()) return std::string();
  absl::StatusOr<std::string> token = kubeclient::ReadFileToString(path);
  if (!token.ok()) return token.status();
  std::string trimmed(absl::StripAsciiWhitespace(*token));
  if (trimmed.empty()) return absl::InvalidArgumentError(absl::StrCat(path, " is empty"));
  return trimmed;
}

absl::Status CheckDraVersion(absl::string_view version) {
  if (version == "v1" || version == "v1beta2" || version == "v1beta1") return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--dra ", version, ": expected v1, v1beta2 or v1beta1"));
}

absl::Status CheckComputeDomainsVersion(absl::string_view version) {
  if (version == "v1beta1" || version == "v1beta2") return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--compute-domains ", version, ": expected v1beta1 or v1beta2"));
}

absl::Status UsePodEvents(const std::string& kubeconfig, ProcessState& process, spdlog::logger& log) {
  if (process.pod_events.recorder != nullptr) return absl::OkStatus();
  absl::StatusOr<PodEvents> events = StartPodEvents(kubeconfig, process.registry, process.clock, log);
  if (!events.ok()) return events.status();
  process.pod_events = *std::move(events);
  process.observed = std::make_unique<history::ObservedRecorder>(
      process.decisions.recorder.get(), std::vector<history::RecordObserver*>{process.pod_events.recorder.get()});
  return absl::OkStatus();
}

namespace {

// The restart collector on a client of its own, fed by a watch of bound pods (a container restarts only on
// a node), recording into the process's decision history.
absl::Status CollectRestarts(const ExtenderOptions& options, ProcessState& process, spdlog::logger& log,
                             ExtenderServers& parts) {
  if (process.recorder() == nullptr) return absl::FailedPreconditionError("--collect-restarts: no decision history");
  kubeclient::RestOptions rest_options;
  process.kube_observability.Observe(rest_options, "restarts");
  absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> rest = ConnectToCluster(options.kubeconfig, rest_options);
  if (!rest.ok()) return Prefixed("--collect-restarts", rest.status());
  parts.restart_rest = *std::move(rest);
  parts.restart_kube = std::make_unique<kubeclient::KubeApi>(*parts.restart_rest);
  kubeclient::RestartCollectorOptions collector;
  collector.scope = {options.restart_namespaces, options.restart_ignored_namespaces, options.restart_ignored_prefixes};
  absl::StatusOr<std::unique_ptr<notify::RestartNotifier>> notifier =
      BuildRestartNotifier(options.restart_notify, process.clock, log, process.registry);
  if (!notifier.ok()) return notifier.status();
  parts.restart_notifier = *std::move(notifier);
  if (notify::RestartNotifier* sink = parts.restart_notifier.get()) {
    collector.on_restart = [sink](const kube::Pod& pod, const history::Record& record) { sink->Restarted(pod, record); };
  }
  parts.restart_collector = std::make_unique<kubeclient::RestartCollector>(
      *parts.restart_kube, *process.recorder(), process.clock, log, process.registry, collector);
  kubeclient::ListWatchOptions watch;
  watch.field_selector = "spec.nodeName!=";
  process.kube_observability.Observe(watch, "restart_pods");
  parts.restart_watch = std::make_unique<kubeclient::ListWatcher>(*parts.restart_rest, "/api/v1/pods", watch,
                                                                  parts.restart_collector->Sink());
  parts.restart_watch->Start();
  return absl::OkStatus();
}

// With --live-state: where cluster-autoscaler serves CapacityBuffers, the watches of the buffers and their
// PodTemplates that prioritize keeps buffered sets whole by (decision/warm_capacity.h), added to `watches`
// (readiness waits for them); where it serves none, nothing to keep. Said in the log either way.
absl::Status WatchBufferedSets(ProcessState& process, spdlog::logger& log, ExtenderServers& parts,
                               std::vector<std::pair<const kubeclient::ListWatcher*, std::string>>& watches) {
  absl::StatusOr<kubeclient::HeadroomApi> api = kubeclient::DiscoverHeadroomApi(*parts.rest);
  if (!api.ok()) return Prefixed("discovering CapacityBuffers (--no-keep-buffered-sets skips it)", api.status());
  if (api->kind != kubeclient::HeadroomApi::Kind::kCapacityBuffers) {
    server::LogEvent(log, "buffered_sets", {{"kept", "false"}, {"reason", api->reason}});
    return absl::OkStatus();
  }
  parts.buffered_shapes = std::make_unique<kubeclient::BufferedShapes>();
  kubeclient::ListWatchOptions buffer_options, template_options;
  process.kube_observability.Observe(buffer_options, "capacitybuffers");
  process.kube_observability.Observe(template_options, "podtemplates");
  parts.buffer_watch = std::make_unique<kubeclient::ListWatcher>(
      *parts.rest, absl::StrCat("/apis/", kubeclient::kCapacityBufferGroup, "/", api->version, "/capacitybuffers"),
      buffer_options, parts.buffered_shapes->BufferSink());
  parts.template_watch = std::make_unique<kubeclient::ListWatcher>(*parts.rest, "/api/v1/podtemplates", template_options,
                                                                   parts.buffered_shapes->TemplateSink());
  parts.buffer_watch->Start();
  parts.template_watch->Start();
  watches.push_back({parts.buffer_watch.get(), "capacitybuffers"});
  watches.push_back({parts.template_watch.get(), "podtemplates"});
  server::LogEvent(log, "buffered_sets", {{"kept", "true"}, {"version", api->version}, {"reason", api->reason}});
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<server::LoggingOptions> ParseLoggingFlags(const std::string& format, const std::string& level) {
  absl::StatusOr<server::LogFormat> parsed_format = server::ParseLogFormat(format);
  if (!parsed_format.ok()) return Prefixed("--log-format", parsed_format.status());
  absl::StatusOr<spdlog::level::level_enum> parsed_level = server::ParseLogLevel(level);
  if (!parsed_level.ok()) return Prefixed("--log-level", parsed_level.status());
  return server::LoggingOptions{*parsed_format, *parsed_level};
}

absl::StatusOr<ExtenderServers> BuildExtender(const ExtenderOptions& options, ProcessState& process,
                                              spdlog::logger& log, server::ReadinessChecks readiness) {
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return absl::InvalidArgumentError("TLS: --tls-cert and --tls-key go together");
  }
  if (options.max_body_bytes <= 0) return absl::InvalidArgumentError("--max-body-bytes: must be positive");
  if (options.scheduler_name.empty()) return absl::InvalidArgumentError("--scheduler-name: must not be empty");
  if (!IsLoopback(options.address) && options.tls_client_ca.empty() && !options.insecure) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--address ", options.address, ": beyond loopback anyone who reaches the port could call bind; give "
        "--tls-client-ca (only holders of its certificates may call) or --insecure"));
  }
  absl::StatusOr<std::string> admin_token = ReadSecretFile(options.admin_token_file);
  if (!admin_token.ok()) return Prefixed("--admin-token-file", admin_token.status());

  if (options.collect_restarts && !options.live_state) {
    return absl::InvalidArgumentError("--collect-restarts: needs --live-state (its records become Events on the pods)");
  }
  if (options.restart_notify.any() && !options.collect_restarts) {
    return absl::InvalidArgumentError("--restart-slack-webhook-file, --restart-webhook-file: need --collect-restarts");
  }
  if (!options.dra_version.empty()) {
    if (!options.live_state) return absl::InvalidArgumentError("--dra: needs --live-state (the claims feed the watched state)");
    if (absl::Status version = CheckDraVersion(options.dra_version); !version.ok()) return version;
  }
  if (!options.compute_domains_version.empty()) {
    if (!options.live_state) {
      return absl::InvalidArgumentError("--compute-domains: needs --live-state (the domains' nodes come from the node watch)");
    }
    if (absl::Status version = CheckComputeDomainsVersion(options.compute_domains_version); !version.ok()) return version;
  }
  if (!(options.kube_api_qps > 0) || options.kube_api_burst < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--kube-api-qps must be positive and --kube-api-burst at least 1, not ",
                                                   options.kube_api_qps, " and ", options.kube_api_burst));
  }
  kubeclient::RestOptions rest_options;
  rest_options.qps = options.kube_api_qps;
  rest_options.burst = options.kube_api_burst;
  process.kube_observability.Observe(rest_options, "extender");
  absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> rest = ConnectToCluster(options.kubeconfig, rest_options);
  if (!rest.ok()) return rest.status();

  ExtenderServers parts;
  parts.rest = *std::move(rest);
  parts.kube = std::make_unique<kubeclient::KubeApi>(*parts.rest);
  parts.state = scheduler::NewInMemoryGpuState(
      process.clock, options.live_state ? NodeLimits(process.registry) : FilterFedNodeLimits(process.registry));
  if (options.live_state) {
    decision::DraGpuClasses gpu_classes;
    gpu_classes.device_classes = options.dra_gpu_classes;
    parts.live_state = std::make_unique<kubeclient::GpuStateSync>(*parts.state, log, std::move(gpu_classes));
    kubeclient::ListWatchOptions node_options;
    process.kube_observability.Observe(node_options, "nodes");
    parts.node_watch = kubeclient::ListWatcher::ForNodes(*parts.rest, node_options, parts.live_state->NodeHandler());
    kubeclient::ListWatchOptions pod_options;
    pod_options.field_selector = "spec.nodeName!=";  // only bound pods hold GPUs
    process.kube_observability.Observe(pod_options, "bound_pods");
    parts.pod_watch = kubeclient::ListWatcher::ForPods(*parts.rest, pod_options, parts.live_state->PodHandler());
    parts.pending_pods = std::make_unique<kubeclient::PendingPodCache>();
    kubeclient::ListWatchOptions pending_options;
    pending_options.field_selector = kubeclient::PendingPodsSelector(options.scheduler_name);
    process.kube_observability.Observe(pending_options, "scheduler_pending_pods");
    parts.pending_pod_watch = kubeclient::ListWatcher::ForPods(*parts.rest, pending_options, parts.pending_pods->Handler());
    parts.node_watch->Start();
    parts.pod_watch->Start();
    parts.pending_pod_watch->Start();
    std::vector<std::pair<const kubeclient::ListWatcher*, std::string>> watches = {
        {parts.node_watch.get(), "nodes"}, {parts.pod_watch.get(), "pods"}, {parts.pending_pod_watch.get(), "pending pods"}};
    if (!options.dra_version.empty()) {
      kubeclient::ListWatchOptions slice_options, claim_options;
      process.kube_observability.Observe(slice_options, "resourceslices");
      process.kube_observability.Observe(claim_options, "resourceclaims");
      parts.slice_watch = kubeclient::ListWatcher::ForResourceSlices(*parts.rest, options.dra_version, slice_options,
                                                                     parts.live_state->SliceHandler());
      parts.claim_watch = kubeclient::ListWatcher::ForResourceClaims(*parts.rest, options.dra_version, claim_options,
                                                                     parts.live_state->ClaimHandler());
      parts.slice_watch->Start();
      parts.claim_watch->Start();
      watches.push_back({parts.slice_watch.get(), "resourceslices"});
      watches.push_back({parts.claim_watch.get(), "resourceclaims"});
    }
    if (!options.compute_domains_version.empty()) {
      kubeclient::ListWatchOptions domain_options;
      process.kube_observability.Observe(domain_options, "computedomains");
      parts.compute_domains = std::make_unique<kubeclient::ComputeDomainCache>();
      parts.compute_domain_watch = kubeclient::ListWatcher::ForComputeDomains(
          *parts.rest, options.compute_domains_version, domain_options, parts.compute_domains->Handler());
      parts.compute_domain_watch->Start();
      watches.push_back({parts.compute_domain_watch.get(), "computedomains"});
    }
    if (options.keep_buffered_sets) {
      if (absl::Status kept = WatchBufferedSets(process, log, parts, watches); !kept.ok()) return kept;
    }
    readiness.push_back({"informer-sync", [watches] {
                           std::string failure;
                           for (const auto& [watch, what] : watches) {
                             if (std::string f = NotListedYet(*watch, what); !f.empty()) {
                               absl::StrAppend(&failure, failure.empty() ? "" : "; ", f);
                             }
                           }
                           return failure;
                         }});
  }
  if (options.leader_election.enabled) {
    absl::StatusOr<LeaderElection> election =
        StartLeaderElection(options.leader_election, options.kubeconfig, log, process.kube_observability);
    if (!election.ok()) return election.status();
    parts.election = *std::move(election);
    readiness.push_back(LeaderReadiness(*parts.election.elector));
  }
  parts.metrics = std::make_unique<scheduler::ExtenderMetrics>(scheduler::ExtenderMetrics::Create(process.registry));
  if (options.provisioning_requests) parts.provisioner = std::make_unique<kubeclient::Provisioner>(*parts.kube, log, process.clock);
  const scheduler::Leadership& leadership =
      parts.election.elector != nullptr ? static_cast<const scheduler::Leadership&>(*parts.election.elector)
                                        : scheduler::SoleReplica();
  parts.extender = std::make_unique<scheduler::Extender>(*parts.state, *process.ledger, *parts.kube, *parts.metrics,
                                                         log, process.clock, parts.provisioner.get(), leadership,
                                                         options.scheduler_name);
  parts.extender->ReadPendingPodsFrom(parts.pending_pods.get());
  // Pods whose GPUs come from ResourceClaims are judged by what the claims ask (docs/dra.md).
  if (parts.slice_watch != nullptr) parts.extender->JudgeClaimsWith(parts.live_state.get());
  // A ComputeDomain's pods are one gang in one NVLink domain (docs/gangs.md, "ComputeDomains").
  if (parts.compute_domains != nullptr) {
    parts.extender->JoinComputeDomainsFrom(
        [domains = parts.compute_domains.get()](absl::string_view namespace_name, absl::string_view channel_template) {
          return domains->ByChannelTemplate(namespace_name, channel_template);
        });
  }
  // Device-plugin pods are scored away from breaking the sets CapacityBuffers keep warm (docs/headroom.md).
  if (parts.buffered_shapes != nullptr) parts.extender->KeepWarmFrom(parts.buffered_shapes.get());
  absl::StatusOr<decision::CapacityWaitPolicy> wait =
      ParseCapacityWaitFlags(options.expected_node_boot, options.max_topology_wait);
  if (!wait.ok()) return wait.status();
  parts.extender->WaitForCapacity(*wait);
  decision::GangBookOptions gangs;
  if (!absl::ParseDuration(options.gang_wait, &gangs.wait) ||
      !absl::ParseDuration(options.gang_bind_grace, &gangs.bind_grace) || gangs.wait <= absl::ZeroDuration() ||
      gangs.bind_grace <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("--gang-wait ", options.gang_wait, " / --gang-bind-grace ",
                                                   options.gang_bind_grace,
                                                   ": expected positive durations such as 2m or 90s"));
  }
  absl::StatusOr<decision::NvlinkDomainLabels> domain_labels =
      options.nvlink_domain_labels.empty() ? decision::NvlinkDomainLabels::Default()
                                           : decision::NvlinkDomainLabels::Create(options.nvlink_domain_labels);
  if (!domain_labels.ok()) return domain_labels.status();
  parts.extender->PlaceGangs(*std::move(domain_labels), gangs);
  if (options.drain_guard) {
    parts.drain_guard = std::make_unique<scheduler::DrainGuard>(*parts.state, *parts.kube, log, process.registry);
    parts.extender->GuardFromDrains(parts.drain_guard.get());
    parts.drain_guard->Start(kDrainGuardPeriod);
  }

  server::HttpServerOptions api_options;
  api_options.address = options.address;
  api_options.port = options.port;
  api_options.tls_cert_file = options.tls_cert;
  api_options.tls_key_file = options.tls_key;
  api_options.tls_client_ca_file = options.tls_client_ca;
  api_options.max_body_bytes = static_cast<size_t>(options.max_body_bytes);
  api_options.name = "extender";
  api_options.blocking_queue =
      BindsAdmitted(options.kube_api_qps, options.kube_api_burst, options.live_state ? 1 : 2, api_options) -
      api_options.blocking_threads;
  absl::StatusOr<std::unique_ptr<server::HttpServer>> api = server::HttpServer::Create(api_options, process.registry);
  if (!api.ok()) return Prefixed("extender server", api.status());
  parts.api = *std::move(api);
  scheduler::RegisterExtenderRoutes(*parts.api, *parts.extender, *admin_token);
  parts.admin_token = *admin_token;

  absl::StatusOr<std::unique_ptr<server::HttpServer>> ops =
      server::CreateOpsServer(options.ops_address, options.ops_port, process.registry, std::move(readiness));
  if (!ops.ok()) return Prefixed("ops server", ops.status());
  parts.ops = *std::move(ops);
  scheduler::RegisterPreferencesRoute(*parts.ops, *process.ledger, *admin_token);
  if (options.live_state) {
    if (absl::Status events = UsePodEvents(options.kubeconfig, process, log); !events.ok()) return events;
  }
  if (options.collect_restarts) {
    if (absl::Status collecting = CollectRestarts(options, process, log, parts); !collecting.ok()) return collecting;
  }
  parts.extender->RecordDecisionsTo(process.recorder());
  if (parts.provisioner != nullptr) parts.provisioner->RecordDecisionsTo(process.recorder());
  parts.idle_gpus = std::make_unique<scheduler::IdleGpusGauge>(process.registry, *parts.state, *process.ledger);
  parts.idle_gpus->RecordChangesTo(process.decisions.recorder.get(), &process.clock);
  parts.idle_gpus->Start(kIdleGpusPeriod);
  history::RegisterDecisionsRoute(*parts.ops, process.decisions.store.get(), *admin_token,
                                  process.decisions.unavailable);
  history::PageSource pages;
  if (const history::DecisionStore* store = process.decisions.store.get(); store != nullptr) {
    pages = [store](const history::DecisionQuery& query) { return store->Query(query); };
  }
  parts.mcp = std::make_unique<mcp::McpServer>(std::move(pages), kVersion, process.decisions.unavailable,
                                               mcp::LiveState{parts.state.get(), process.ledger.get()});
  mcp::RegisterMcpRoute(*parts.ops, *parts.mcp, {*admin_token, options.mcp_beyond_loopback});
  return parts;
}

int RunExtender(const ExtenderOptions& options, const std::function<void(int, int)>& on_listening) {
  // Before any thread exists, so that every thread inherits the mask and the signal reaches sigwait.
  if (absl::Status blocked = server::BlockShutdownSignals(); !blocked.ok()) return Fail(Prefixed("signals", blocked));
  absl::StatusOr<server::LoggingOptions> logging = ParseLoggingFlags(options.log_format, options.log_level);
  if (!logging.ok()) return Fail(logging.status());
  server::SetUpLogging(*logging);
  spdlog::logger& log = *spdlog::default_logger();

  ProcessState process;
  if (absl::Status ledger = UseLedger(options.ledger, options.kubeconfig, process, log); !ledger.ok()) {
    return Fail(ledger);
  }
  process.decisions = OpenDecisionHistory(options.decision_db, options.decision_db_max_bytes, process.registry, log);
  std::atomic<bool> serving{false};
  absl::StatusOr<ExtenderServers> servers =
      BuildExtender(options, process, log, process.ReadinessChecks(serving));
  if (!servers.ok()) return Fail(servers.status());

  absl::StatusOr<int> ops_port = servers->ops->Start();
  if (!ops_port.ok()) return Fail(Prefixed("ops server", ops_port.status()));
  absl::StatusOr<int> api_port = servers->api->Start();
  if (!api_port.ok()) return Fail(Prefixed("extender server", api_port.status()));
  serving = true;
  server::LogEvent(log, "listening", {{"extender", absl::StrCat(options.address, ":", *api_port)},
                                      {"tls", servers->api->is_tls()},
                                      {"ops", absl::StrCat(options.ops_address, ":", *ops_port)},
                                      {"admin", servers->admin_token.empty() ? "disabled" : "enabled"}});
  if (on_listening) on_listening(*api_port, *ops_port);

  absl::Status waited = server::WaitForShutdownSignal([&](int signal) {
    server::LogEvent(log, "shutdown", {{"signal", signal}});
    serving = false;  // readiness fails at once; requests in flight finish inside Stop()
    servers->api->Stop();
    servers->ops->Stop();
    if (servers->election.elector != nullptr) servers->election.elector->Stop();  // releases the Lease: a fast failover
  });
  return waited.ok() ? 0 : Fail(Prefixed("waiting for a signal", waited));
}

void AddExtenderCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ExtenderOptions>();
  CLI::App* cmd = app.add_subcommand("extender", "Serve the kube-scheduler extender verbs (filter, prioritize, bind, preempt)");
  AddExtenderFlags(*cmd, *options);
  cmd->add_flag("--insecure", options->insecure,
                "allow --address beyond loopback without --tls-client-ca: whoever reaches the port can call bind");
  cmd->callback([options, &exit_code] { exit_code = RunExtender(*options); });
}

void AddExtenderFlags(CLI::App& cmd, ExtenderOptions& options) {
  cmd.add_option("--address", options.address,
                 "listen address of the verbs (beyond loopback: --tls-client-ca or --insecure)")
      ->capture_default_str();
  cmd.add_option("--ops-address", options.ops_address, "listen address of the ops port")->capture_default_str();
  cmd.add_option("--port", options.port, "extender port")->capture_default_str()->check(CLI::Range(0, 65535));
  cmd.add_option("--tls-cert", options.tls_cert, "PEM server certificate (with --tls-key: HTTPS)");
  cmd.add_option("--tls-key", options.tls_key, "PEM server key");
  cmd.add_option("--tls-client-ca", options.tls_client_ca, "PEM CA that client certificates must chain to");
  cmd.add_option("--ops-port", options.ops_port, "plain HTTP port for /healthz /readyz /metrics /preferences /decisions")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd.add_option("--admin-token-file", options.admin_token_file,
                 "file holding the bearer token for /admin/*, /decisions and, beyond loopback, /preferences "
                 "(absent: /admin/* and /decisions disabled, /preferences on loopback only)");
  cmd.add_option("--log-format", options.log_format, "text or json")->capture_default_str();
  cmd.add_option("--log-level", options.log_level, "trace, debug, info, warn, error")->capture_default_str();
  cmd.add_option("--max-body-bytes", options.max_body_bytes, "largest request body accepted")->capture_default_str();
  AddKubeconfigFlag(cmd, options.kubeconfig);
  cmd.add_option("--kube-api-qps", options.kube_api_qps,
                 "queries per second of the client that binds (kube-scheduler's default)")
      ->capture_default_str();
  cmd.add_option("--kube-api-burst", options.kube_api_burst, "burst of that client (kube-scheduler's default)")
      ->capture_default_str();
  AddLedgerFlag(cmd, options.ledger);
  AddDecisionDbFlag(cmd, options.decision_db, options.decision_db_max_bytes);
  cmd.add_flag("--mcp-beyond-loopback", options.mcp_beyond_loopback,
               "serve /mcp on the ops port to peers beyond loopback too, with the admin token (default: loopback "
               "peers only, e.g. kubectl port-forward)");
  cmd.add_flag("--live-state", options.live_state,
               "watch nodes and bound pods and keep the GPU state from them (topofit.io/gpu-ids, GPU requests)");
  cmd.add_option("--dra", options.dra_version,
                 "with --live-state: also watch resource.k8s.io ResourceSlices and ResourceClaims at this version "
                 "(v1; v1beta2 or v1beta1 where the cluster serves only those), so GPUs allocated through Dynamic "
                 "Resource Allocation are taken and pods whose GPUs come from ResourceClaims are judged (docs/dra.md)");
  cmd.add_option("--dra-gpu-class", options.dra_gpu_classes,
                 "with --dra: a DeviceClass whose claim requests ask for whole GPUs (repeatable; requests whose "
                 "CEL selector names the driver gpu.nvidia.com count too)")
      ->capture_default_str();
  cmd.add_option("--compute-domains", options.compute_domains_version,
                 "with --live-state: watch NVIDIA's ComputeDomains (resource.nvidia.com at this version: v1beta1, or "
                 "v1beta2 from the driver that serves it) and place each domain's pods as one gang in one NVLink "
                 "domain, one per node, never on a node another domain holds (docs/gangs.md)");
  cmd.add_flag_callback("--no-keep-buffered-sets", [&options] { options.keep_buffered_sets = false; },
                        "with --live-state: do not watch cluster-autoscaler's CapacityBuffers (by default, where they "
                        "are served, prioritize scores down the nodes where a pod would break a buffered set: "
                        "docs/headroom.md)");
  cmd.add_flag("--collect-restarts", options.collect_restarts,
               "with --live-state: record every container restart of a bound pod in the decision history, diagnosed "
               "(GPU fault, out of memory, eviction, image or configuration, liveness probe, the application) with "
               "its termination, Warning events and log tail, and as a Warning Event on the pod; `topofit explain "
               "restart NS/NAME` tells it (docs/restarts.md)");
  cmd.add_option("--restart-namespaces", options.restart_namespaces,
                 "with --collect-restarts: only these namespaces (default: all)")
      ->delimiter(',');
  cmd.add_option("--restart-ignore-namespaces", options.restart_ignored_namespaces,
                 "with --collect-restarts: leave these namespaces out")
      ->delimiter(',');
  cmd.add_option("--restart-ignore-prefixes", options.restart_ignored_prefixes,
                 "with --collect-restarts: leave out pods whose names start with one of these")
      ->delimiter(',');
  AddRestartNotifyFlags(cmd, options.restart_notify);
  cmd.add_flag("--provisioning-requests", options.provisioning_requests,
               "for a GPU pod every offered node refused, create a ProvisioningRequest (best-effort-atomic) "
               "excluding those nodes, so cluster-autoscaler scales up for it; for a gang no NVLink domain holds, one "
               "request for the whole gang in the domain nearest to holding it (docs/gangs.md)");
  // A callback rather than a "!--no-x" flag, whose help shows CLI11's default marker.
  cmd.add_flag_callback("--no-drain-guard", [&options] { options.drain_guard = false; },
                        "do not mark pods that got the topology they would refuse or wait for elsewhere "
                        "cluster-autoscaler.kubernetes.io/safe-to-evict=false while no other node gives it");
  AddLeaderElectionFlags(cmd, options.leader_election, "binds");
  cmd.add_option("--scheduler-name", options.scheduler_name,
                 "bind only pods with this spec.schedulerName (the profile of the kube-scheduler calling topofit)")
      ->capture_default_str();
  AddCapacityWaitFlags(cmd, options.expected_node_boot, options.max_topology_wait);
  cmd.add_option("--gang-wait", options.gang_wait,
                 "how long a gang's reservation holds its GPUs for every member to come (docs/gangs.md)")
      ->capture_default_str();
  cmd.add_option("--gang-bind-grace", options.gang_bind_grace,
                 "once every member of a gang has its place, how long their binds may take")
      ->capture_default_str();
  cmd.add_option("--domain-label", options.nvlink_domain_labels,
                 "a node label naming a multi-node NVLink domain, most tightly connected first (repeat; "
                 "default: nvidia.com/gpu.clique, topology.k8s.aws/ultraserver-id)");
}

void AddCapacityWaitFlags(CLI::App& cmd, std::string& expected_node_boot, std::string& max_topology_wait) {
  cmd.add_option("--expected-node-boot", expected_node_boot,
                 "how long a scale-up takes to give a Ready GPU node here (a pod preferring a topology weighs "
                 "the rest of it against running slower now; a pod pending twice as long is no longer held off "
                 "capacity grown for others)")
      ->capture_default_str();
  cmd.add_option("--max-topology-wait", max_topology_wait,
                 "the longest a pod preferring a topology waits for the capacity scaled up for it (0: never)")
      ->capture_default_str();
}

absl::StatusOr<decision::CapacityWaitPolicy> ParseCapacityWaitFlags(const std::string& expected_node_boot,
                                                                   const std::string& max_topology_wait) {
  decision::CapacityWaitPolicy wait;
  if (!absl::ParseDuration(expected_node_boot, &wait.expected_boot) ||
      !absl::ParseDuration(max_topology_wait, &wait.max_wait) || wait.expected_boot < absl::ZeroDuration() ||
      wait.max_wait < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("--expected-node-boot ", expected_node_boot,
                                                   " / --max-topology-wait ", max_topology_wait,
                                                   ": expected non-negative durations such as 5m or 90s"));
  }
  return wait;
}

}  // namespace topofit::cli
