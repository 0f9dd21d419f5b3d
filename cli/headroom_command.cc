#include "cli/headroom_command.h"

#include <iostream>
#include <memory>
#include <thread>

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/build_info.h"
#include "cli/decision_history.h"
#include "cli/extender_command.h"
#include "cli/kube_observability.h"
#include "cli/ledger_flags.h"
#include "cli/process_state.h"
#include "kubeclient/capacity_buffers.h"
#include "kubeclient/headroom_reconciler.h"
#include "server/clock.h"
#include "server/http_server.h"
#include "server/logging.h"
#include "server/metrics.h"
#include "server/ops_endpoints.h"
#include "server/process_metrics.h"
#include "server/shutdown.h"

namespace topofit::cli {
namespace {

int Fail(absl::string_view what, const absl::Status& status) {
  std::cerr << "topofit headroom: " << what << (what.empty() ? "" : ": ") << status.message() << "\n";
  return 1;
}

absl::StatusOr<decision::HeadroomConfig> PlanningFrom(const HeadroomCommandOptions& options) {
  if (!(options.fill_rate > 0 && options.fill_rate <= 1)) {
    return absl::InvalidArgumentError("--fill-rate must be in (0, 1]");
  }
  if (!(options.window_minutes > 0 && options.boot_minutes > 0 && options.shrink_after_minutes >= 0 &&
        options.interval_seconds > 0)) {
    return absl::InvalidArgumentError("--window, --boot and --interval must be positive, --shrink-after not negative");
  }
  decision::HeadroomConfig config;
  config.quantile = options.fill_rate;
  config.window = absl::Minutes(options.window_minutes);
  config.default_boot = absl::Minutes(options.boot_minutes);
  config.shrink_after = absl::Minutes(options.shrink_after_minutes);
  config.budget_gpus = options.budget_gpus;
  return config;
}

// The API the warm capacity is written through: discovered (auto), or the one --api names, checked.
absl::StatusOr<kubeclient::HeadroomApi> ChooseApi(const std::string& api, kubeclient::RestClient& rest) {
  if (api == "placeholders") {
    return kubeclient::HeadroomApi{kubeclient::HeadroomApi::Kind::kPlaceholders, "", "--api placeholders"};
  }
  if (api != "auto" && api != "capacity-buffers") {
    return absl::InvalidArgumentError(absl::StrCat("--api: \"", api, "\"; known: auto, capacity-buffers, placeholders"));
  }
  absl::StatusOr<kubeclient::HeadroomApi> found = kubeclient::DiscoverHeadroomApi(rest);
  if (found.ok() && api == "capacity-buffers" && found->kind != kubeclient::HeadroomApi::Kind::kCapacityBuffers) {
    return absl::FailedPreconditionError(
        absl::StrCat("--api capacity-buffers, but the API server serves no capacitybuffers (", kubeclient::kCapacityBufferGroup,
                     " v1beta1 or v1alpha1: cluster-autoscaler before 1.34, or its CRD not installed)"));
  }
  return found;
}

}  // namespace

int RunHeadroom(const HeadroomCommandOptions& options, const std::function<void(int)>& on_listening) {
  if (absl::Status blocked = server::BlockShutdownSignals(); !blocked.ok()) return Fail("signals", blocked);
  absl::StatusOr<server::LoggingOptions> logging = ParseLoggingFlags(options.log_format, options.log_level);
  if (!logging.ok()) return Fail("", logging.status());
  absl::StatusOr<decision::HeadroomConfig> planning = PlanningFrom(options);
  if (!planning.ok()) return Fail("", planning.status());
  server::SetUpLogging(*logging);
  spdlog::logger& log = *spdlog::default_logger();

  server::MetricsRegistry registry;
  RegisterBuildInfo(registry);
  server::RegisterProcessMetrics(registry);
  const server::RealClock clock;
  KubeObservability kube_observability(registry, clock, spdlog::default_logger());
  kubeclient::RestOptions rest_options;
  kube_observability.Observe(rest_options, "headroom");
  absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> rest = ConnectToCluster(options.kubeconfig, rest_options);
  if (!rest.ok()) return Fail("", rest.status());
  kubeclient::RestOptions watch_options;
  kube_observability.Observe(watch_options, "headroom_pods");
  absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> watch_rest = ConnectToCluster(options.kubeconfig, watch_options);
  if (!watch_rest.ok()) return Fail("", watch_rest.status());

  absl::StatusOr<kubeclient::HeadroomApi> api = ChooseApi(options.api, **rest);
  if (!api.ok()) return Fail("", api.status());
  // Which mechanism keeps the capacity is said once, at start: never silent.
  server::LogEvent(log, "headroom_api",
                   {{"kind", api->kind == kubeclient::HeadroomApi::Kind::kCapacityBuffers ? "CapacityBuffer"
                                                                                           : "placeholder Deployment"},
                    {"version", api->version},
                    {"namespace", options.namespace_name},
                    {"reason", api->reason}});
  server::Gauge& api_info = registry.AddGauge("topofit_headroom_api_info",
                                              "1 for the mechanism the controller keeps warm capacity with", {"kind"});
  api_info.Set(1, {api->kind == kubeclient::HeadroomApi::Kind::kCapacityBuffers ? "capacity-buffers" : "placeholders"});

  // Declared before the reconciler, which records to it: destroyed after it.
  DecisionHistory decisions;
  if (!options.decision_db.empty()) {
    decisions = OpenDecisionHistory(options.decision_db, options.decision_db_max_bytes, registry, log);
  }
  kubeclient::HeadroomDemand demand;
  kubeclient::HeadroomWriter writer(**rest, *api, options.namespace_name);
  kubeclient::HeadroomReconciler reconciler(
      demand, writer, *planning, registry, log, decisions.recorder.get(),
      api->kind == kubeclient::HeadroomApi::Kind::kCapacityBuffers ? "capacity-buffers" : "placeholders");
  kubeclient::ListWatchOptions pod_options;
  kube_observability.Observe(pod_options, "pods");
  kubeclient::ListWatcher pods(**watch_rest, "/api/v1/pods", pod_options, demand.Sink());

  server::ReadinessChecks readiness = {{"pods-sync", [&pods] { return NotListedYet(pods, "pods"); }}};
  // Declared after the reconciler's writer and before the loop that asks it: destroyed (the Lease released)
  // once the loop has ended.
  LeaderElection election;
  if (options.leader_election.enabled) {
    absl::StatusOr<LeaderElection> started =
        StartLeaderElection(options.leader_election, options.kubeconfig, log, kube_observability);
    if (!started.ok()) return Fail("", started.status());
    election = *std::move(started);
    readiness.push_back(LeaderReadiness(*election.elector));
  }
  absl::StatusOr<std::unique_ptr<server::HttpServer>> ops =
      server::CreateOpsServer(options.address, options.ops_port, registry, std::move(readiness));
  if (!ops.ok()) return Fail("ops server", ops.status());
  absl::StatusOr<int> ops_port = (*ops)->Start();
  if (!ops_port.ok()) return Fail("ops server", ops_port.status());
  pods.Start();
  server::LogEvent(log, "listening", {{"ops", absl::StrCat(options.address, ":", *ops_port)}});
  if (on_listening) on_listening(*ops_port);

  absl::Notification stop;
  std::thread loop([&] {
    const absl::Duration interval = absl::Seconds(options.interval_seconds);
    while (!stop.WaitForNotificationWithTimeout(interval)) {
      // Demand is read only once the first LIST is in: an empty view would plan every buffer away.
      if (!pods.synced()) continue;
      // A replica that does not lead remembers demand and writes nothing.
      if (election.elector != nullptr && !election.elector->IsLeader()) {
        reconciler.Follow(clock.Now());
        continue;
      }
      reconciler.Reconcile(clock.Now()).IgnoreError();  // logged and counted; the next pass retries
    }
  });
  absl::Status waited = server::WaitForShutdownSignal([&](int signal) {
    server::LogEvent(log, "shutdown", {{"signal", signal}});
    stop.Notify();
    (*ops)->Stop();
  });
  loop.join();
  pods.Stop();
  return waited.ok() ? 0 : Fail("waiting for a signal", waited);
}

void AddHeadroomCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<HeadroomCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "headroom",
      "Run the headroom controller: warm GPU capacity sized from the bursts seen and shaped like them, as "
      "cluster-autoscaler CapacityBuffers (or placeholder Deployments where CA serves none)");
  AddKubeconfigFlag(*cmd, options->kubeconfig);
  AddLeaderElectionFlags(*cmd, options->leader_election, "writes the buffers");
  cmd->add_option("--namespace", options->namespace_name, "namespace of the buffers or placeholders")
      ->capture_default_str();
  cmd->add_option("--api", options->api,
                  "auto (CapacityBuffers where the API serves them, else placeholders), capacity-buffers (fail "
                  "without them) or placeholders")
      ->capture_default_str();
  cmd->add_option("--fill-rate", options->fill_rate,
                  "share of the pods rising over one node boot each shape's buffer is sized to serve")
      ->capture_default_str();
  cmd->add_option("--window", options->window_minutes, "minutes of demand remembered")->capture_default_str();
  cmd->add_option("--boot", options->boot_minutes,
                  "minutes from a scale-up to a usable GPU node (boot, driver, image pull): the rise a buffer covers")
      ->capture_default_str();
  cmd->add_option("--shrink-after", options->shrink_after_minutes,
                  "minutes a buffer's target must stay lower before it shrinks")
      ->capture_default_str();
  cmd->add_option("--budget-gpus", options->budget_gpus, "most GPUs kept warm over every shape (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--interval", options->interval_seconds, "seconds between passes")->capture_default_str();
  cmd->add_option("--address", options->address, "listen address of the ops port")->capture_default_str();
  cmd->add_option("--ops-port", options->ops_port, "plain HTTP port for /healthz /readyz /metrics")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--decision-db", options->decision_db,
                  "SQLite file recording each change of a shape's warm capacity and why (topofit explain --db, "
                  "kind headroom); not recorded when absent")
      ->option_text("PATH");
  AddDecisionDbMaxBytesFlag(*cmd, options->decision_db_max_bytes);
  cmd->add_option("--log-format", options->log_format, "text or json")->capture_default_str();
  cmd->add_option("--log-level", options->log_level, "trace, debug, info, warn, error")->capture_default_str();
  cmd->callback([options, &exit_code] { exit_code = RunHeadroom(*options); });
}

}  // namespace topofit::cli
