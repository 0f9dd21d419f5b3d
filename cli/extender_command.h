#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "absl/status/statusor.h"
#include "cli/process_state.h"
#include "cli/decision_history.h"
#include "cli/kube_observability.h"
#include "cli/leader_election_flags.h"
#include "cli/pod_events.h"
#include "cli/restart_notify_flags.h"
#include "kubeclient/buffered_shapes.h"
#include "kubeclient/compute_domain_cache.h"
#include "kubeclient/gpu_state_sync.h"
#include "kubeclient/kube_api.h"
#include "kubeclient/leader_election.h"
#include "kubeclient/list_watcher.h"
#include "kubeclient/pending_pod_cache.h"
#include "kubeclient/restart_collector.h"
#include "notify/restart_notifier.h"
#include "kubeclient/provisioner.h"
#include "kubeclient/rest_client.h"
#include "ledger/ledger.h"
#include "scheduler/bind_authorization.h"
#include "scheduler/drain_guard.h"
#include "scheduler/extender.h"
#include "scheduler/extender_metrics.h"
#include "scheduler/gpu_state.h"
#include "scheduler/idle_gpus_gauge.h"
#include "mcp/server.h"
#include "server/clock.h"
#include "server/http_server.h"
#include "server/logging.h"
#include "server/metrics.h"
#include "server/ops_endpoints.h"
#include "server/sampled_log.h"

namespace topofit::cli {

// The options of `topofit extender`.
struct ExtenderOptions {
  // The verbs bind pods: loopback by default (the extender beside its kube-scheduler, manifests/); beyond
  // loopback only with client certificates (--tls-client-ca) or --insecure.
  std::string address = "127.0.0.1";
  int port = 8443;              // the extender verbs (HTTPS with --tls-cert/--tls-key)
  bool insecure = false;        // allow --address beyond loopback without --tls-client-ca
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;    // optional: require client certificates signed by this CA
  // Loopback unless told: the manifests say 0.0.0.0, where probes and Prometheus come from outside the pod.
  std::string ops_address = "127.0.0.1";
  int ops_port = 9090;          // plain HTTP: /healthz /readyz /metrics; /preferences /decisions guarded
  // Bearer token for /admin/* and, beyond loopback, /preferences and /decisions; empty: admin endpoints
  // disabled, the others on loopback only.
  std::string admin_token_file;
  bool mcp_beyond_loopback = false;  // /mcp on the ops port for peers beyond loopback (mcp/http.h)
  std::string log_format = "text";
  std::string log_level = "info";
  int64_t max_body_bytes = int64_t{64} << 20;
  std::string kubeconfig;       // empty: in-cluster service account
  // The rate limit of the client that binds (one API call a bind with live_state, two without):
  // kube-scheduler's own defaults, so that the extender keeps up with the binds its scheduler sends
  // (client-go's 5/10 capped it near 2 a second).
  double kube_api_qps = 50;
  int kube_api_burst = 100;
  bool live_state = false;      // feed the GPU state from watches of nodes and bound pods
  // With live_state: the resource.k8s.io version whose ResourceSlices and ResourceClaims also feed it
  // ("v1", "v1beta2", "v1beta1"); empty: none (a cluster without Dynamic Resource Allocation).
  std::string dra_version;
  // With dra_version: the DeviceClasses whose requests ask for whole GPUs (decision::DraGpuClasses).
  std::vector<std::string> dra_gpu_classes = {"gpu.nvidia.com"};
  // With live_state: the resource.nvidia.com version whose ComputeDomains make their pods gangs in one
  // NVLink domain ("v1beta1", "v1beta2"; decision/compute_domain.h); empty: none.
  std::string compute_domains_version;
  // With live_state: where cluster-autoscaler's CapacityBuffers are served, watch them and their
  // PodTemplates, so that prioritize keeps the buffered sets whole (decision/warm_capacity.h).
  bool keep_buffered_sets = true;
  // With live_state: every container restart of a bound pod, diagnosed, into the decision history and as an
  // Event on the pod (kubeclient/restart_collector.h), for these namespaces (empty: all) but the ignored
  // ones and pods whose names start with an ignored prefix.
  bool collect_restarts = false;
  std::vector<std::string> restart_namespaces;
  std::vector<std::string> restart_ignored_namespaces;
  std::vector<std::string> restart_ignored_prefixes;
  RestartNotifyFlags restart_notify;  // with collect_restarts: webhooks each restart is posted to
  bool provisioning_requests = false;  // ask CA for capacity for pods refused for topology
  bool drain_guard = true;             // keep CA's scale-down from stranding pods (scheduler/drain_guard.h)
  // Of several replicas only the holder of a coordination.k8s.io Lease binds; the others report not ready.
  LeaderElectionFlags leader_election{.lease_name = "topofit"};
  std::string ledger = "memory";  // or "api" (cli/ledger_flags.h)
  std::string decision_db;        // empty: the decision history in memory (cli/decision_history.h)
  int64_t decision_db_max_bytes = history::kDefaultMaxBytes;
  // Bind binds only pods with this spec.schedulerName (scheduler/bind_authorization.h).
  std::string scheduler_name = std::string(scheduler::kDefaultSchedulerName);
  // Wait or place now (decision/capacity_wait.h): Go-style durations; max wait 0 turns waiting off.
  std::string expected_node_boot = "5m";
  std::string max_topology_wait = "10m";
  // Gangs (decision/gang_book.h): how long a reservation waits for every member, then for their binds.
  std::string gang_wait = "2m";
  std::string gang_bind_grace = "1m";
  std::vector<std::string> nvlink_domain_labels;  // empty: decision::NvlinkDomainLabels::Default()
};

// How often topofit_idle_gpus is recomputed: Prometheus' default scrape interval.
inline constexpr absl::Duration kIdleGpusPeriod = absl::Seconds(15);
// How often the drain guard judges its pods again: CA scans every 10 s and drains a node only after it
// was unneeded for 10 minutes, so a guard a few scans late changes nothing.
inline constexpr absl::Duration kDrainGuardPeriod = absl::Seconds(30);

// OK for a version of resource.k8s.io that --dra reads (v1, v1beta2, v1beta1); else the flag's error.
absl::Status CheckDraVersion(absl::string_view version);
// --compute-domains VERSION: v1beta1 or v1beta2.
absl::Status CheckComputeDomainsVersion(absl::string_view version);

// A secret mounted as a file (--admin-token-file), surrounding whitespace trimmed; "" for no path.
absl::StatusOr<std::string> ReadSecretFile(const std::string& path);
// Turns on the Kubernetes Events on pods for `process` (cli/pod_events.h), after its decision history is
// open; a second call does nothing.
absl::Status UsePodEvents(const std::string& kubeconfig, ProcessState& process, spdlog::logger& log);

// --log-format and --log-level, checked; the error names the flag.
absl::StatusOr<server::LoggingOptions> ParseLoggingFlags(const std::string& format, const std::string& level);

// The extender, wired but not yet serving: `api` serves the verbs, `ops` /healthz /readyz /metrics
// /preferences (`topofit serve` adds the expander's routes to the same ops server). Members are destroyed
// in reverse order, so the servers stop before what they call into goes away.
struct ExtenderServers {
  std::unique_ptr<kubeclient::RestClient> rest;
  std::unique_ptr<kubeclient::KubeApi> kube;
  std::unique_ptr<scheduler::GpuState> state;
  // With --live-state: the watches feeding `state`, already started (null without the flag).
  std::unique_ptr<kubeclient::GpuStateSync> live_state;
  std::unique_ptr<kubeclient::ListWatcher> node_watch;
  std::unique_ptr<kubeclient::ListWatcher> pod_watch;
  // The pods pending for --scheduler-name, which binds read instead of GETting them.
  std::unique_ptr<kubeclient::PendingPodCache> pending_pods;
  std::unique_ptr<kubeclient::ListWatcher> pending_pod_watch;
  // With --collect-restarts: its own client (its reads never queue ahead of a Binding), the collector, and
  // the watch feeding it (declared after the collector, so stopped first).
  std::unique_ptr<kubeclient::RestClient> restart_rest;
  std::unique_ptr<kubeclient::KubeApi> restart_kube;
  std::unique_ptr<notify::RestartNotifier> restart_notifier;  // before the collector, which calls it
  std::unique_ptr<kubeclient::RestartCollector> restart_collector;
  std::unique_ptr<kubeclient::ListWatcher> restart_watch;
  // With --dra as well.
  std::unique_ptr<kubeclient::ListWatcher> slice_watch;
  std::unique_ptr<kubeclient::ListWatcher> claim_watch;
  // With --compute-domains: the domains, then the watch feeding them.
  std::unique_ptr<kubeclient::ComputeDomainCache> compute_domains;
  std::unique_ptr<kubeclient::ListWatcher> compute_domain_watch;
  // With keep_buffered_sets where CapacityBuffers are served: the buffers, then the watches feeding them.
  std::unique_ptr<kubeclient::BufferedShapes> buffered_shapes;
  std::unique_ptr<kubeclient::ListWatcher> buffer_watch;
  std::unique_ptr<kubeclient::ListWatcher> template_watch;
  // With --leader-elect: the elector, already started (null members without the flag). Before `extender`,
  // which asks it, so it outlives it; destroying it releases the Lease.
  LeaderElection election;
  std::unique_ptr<scheduler::ExtenderMetrics> metrics;
  // With --provisioning-requests (declared before the extender, which uses it, so it outlives it).
  std::unique_ptr<kubeclient::Provisioner> provisioner;
  // Unless --no-drain-guard, refreshed every kDrainGuardPeriod (declared before the extender, which uses it,
  // after the state and client it uses).
  std::unique_ptr<scheduler::DrainGuard> drain_guard;
  std::unique_ptr<scheduler::Extender> extender;
  // topofit_idle_gpus, refreshed every kIdleGpusPeriod (declared after the state it reads).
  std::unique_ptr<scheduler::IdleGpusGauge> idle_gpus;
  // /mcp on the ops port: the decision history, the GPU state and the ledger (declared before the server
  // that calls it, after what it reads).
  std::unique_ptr<mcp::McpServer> mcp;
  std::unique_ptr<server::HttpServer> api;
  std::unique_ptr<server::HttpServer> ops;
  std::string admin_token;  // from --admin-token-file; empty: none
};

// Checks `options` (other than logging) and builds the extender on `process`. Errors name the flag or part
// that failed. /readyz holds `readiness` and the extender's own checks: with --live-state the node and pod
// watches start here, and "informer-sync" passes once both have listed; with --leader-elect the elector
// starts here, and "leader-election" passes only while it leads.
absl::StatusOr<ExtenderServers> BuildExtender(const ExtenderOptions& options, ProcessState& process,
                                              spdlog::logger& log, server::ReadinessChecks readiness);

// Runs the extender until SIGTERM or SIGINT; returns the exit code (1 for bad options or start-up
// failures, each with a message on stderr). `on_listening(api_port, ops_port)` is called once both
// servers serve (tests use it to learn the ports when they ask for port 0).
int RunExtender(const ExtenderOptions& options, const std::function<void(int, int)>& on_listening = {});

void AddExtenderCommand(CLI::App& app, int& exit_code);
// The extender's flags on `cmd`, bound to `options` (which must outlive parsing); `topofit serve` has them too.
void AddExtenderFlags(CLI::App& cmd, ExtenderOptions& options);

// --expected-node-boot and --max-topology-wait (decision/capacity_wait.h): the extender's, and the
// expander's, which ranks groups for pods that ask for capacity by the extender's rule.
void AddCapacityWaitFlags(CLI::App& cmd, std::string& expected_node_boot, std::string& max_topology_wait);
absl::StatusOr<decision::CapacityWaitPolicy> ParseCapacityWaitFlags(const std::string& expected_node_boot,
                                                                   const std::string& max_topology_wait);

}  // namespace topofit::cli
