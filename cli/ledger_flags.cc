#include "cli/ledger_flags.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "kubeclient/api_ledger.h"
#include "kubeclient/config.h"
#include "kubeclient/kube_api.h"
#include "kubeclient/list_watcher.h"

namespace topofit::cli {

void AddKubeconfigFlag(CLI::App& cmd, std::string& kubeconfig) {
  cmd.add_option("--kubeconfig", kubeconfig, "kubeconfig file (empty: in-cluster service account)");
}

void AddLedgerFlag(CLI::App& cmd, std::string& ledger) {
  cmd.add_option("--ledger", ledger,
                 "where preferences and intents live: memory (this process), or api (annotations on the pods, "
                 "shared with the other component and kept across restarts)")
      ->capture_default_str()
      ->check(CLI::IsMember({"memory", "api"}));
}

absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> ConnectToCluster(const std::string& kubeconfig,
                                                                         const kubeclient::RestOptions& options) {
  const std::string source = kubeconfig.empty() ? "in-cluster config" : kubeconfig;
  absl::StatusOr<kubeclient::ClusterConfig> cluster = kubeclient::LoadClusterConfig(kubeconfig);
  if (!cluster.ok()) return absl::Status(cluster.status().code(), absl::StrCat(source, ": ", cluster.status().message()));
  absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> rest = kubeclient::RestClient::Create(*cluster, options);
  if (!rest.ok()) return absl::Status(rest.status().code(), absl::StrCat("Kubernetes client: ", rest.status().message()));
  return rest;
}

absl::Status UseLedger(const std::string& ledger, const std::string& kubeconfig, ProcessState& process,
                       spdlog::logger& log) {
  if (ledger == "memory") return absl::OkStatus();
  if (ledger != "api") return absl::InvalidArgumentError(absl::StrCat("--ledger: want memory or api, not \"", ledger, "\""));
  // A client of its own: publishing the ledger has its own QPS budget and never holds up a Binding.
  kubeclient::RestOptions rest_options;
  process.kube_observability.Observe(rest_options, "ledger");
  absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> rest = ConnectToCluster(kubeconfig, rest_options);
  if (!rest.ok()) return absl::Status(rest.status().code(), absl::StrCat("--ledger=api: ", rest.status().message()));
  process.ledger_rest = *std::move(rest);
  process.ledger_kube = std::make_unique<kubeclient::KubeApi>(*process.ledger_rest);
  kubeclient::ApiLedgerOptions options;
  options.limits = process.ledger_limits;
  options.node_groups_namespace = kubeclient::OwnNamespace();
  process.kube_observability.Observe(options);
  auto api_ledger = std::make_unique<kubeclient::ApiLedger>(*process.ledger_kube, process.clock, log, options);
  kubeclient::ListWatchOptions pending;
  pending.field_selector = "spec.nodeName=";  // pending pods, of every scheduler (docs/kubeclient.md)
  process.kube_observability.Observe(pending, "pending_pods");
  process.ledger_watch = kubeclient::ListWatcher::ForPods(*process.ledger_rest, pending, api_ledger->PodHandler());
  process.ledger = std::move(api_ledger);
  process.ledger_watch->Start();
  static_cast<kubeclient::ApiLedger&>(*process.ledger).node_groups().Start();
  return absl::OkStatus();
}

}  // namespace topofit::cli
