#include "cli/leader_election_flags.h"

#include "absl/strings/str_cat.h"
#include "cli/ledger_flags.h"
#include "cli/process_state.h"
#include "server/logging.h"

namespace topofit::cli {

void AddLeaderElectionFlags(CLI::App& cmd, LeaderElectionFlags& flags, const std::string& acts) {
  cmd.add_flag("--leader-elect", flags.enabled,
               absl::StrCat("of several replicas only the holder of a Lease ", acts, "; the others report not ready"));
  cmd.add_option("--leader-elect-lease-name", flags.lease_name, "the coordination.k8s.io Lease")->capture_default_str();
  cmd.add_option("--leader-elect-namespace", flags.namespace_name,
                 "the Lease's namespace (default: $POD_NAMESPACE, else the service account's, else default)");
  cmd.add_option("--leader-elect-identity", flags.identity, "this replica's name in the Lease (default: hostname_random)");
}

absl::StatusOr<LeaderElection> StartLeaderElection(const LeaderElectionFlags& flags, const std::string& kubeconfig,
                                                   spdlog::logger& log, KubeObservability& observability) {
  kubeclient::LeaderElectionConfig config;
  config.namespace_name = flags.namespace_name.empty() ? kubeclient::OwnNamespace() : flags.namespace_name;
  config.lease_name = flags.lease_name;
  config.identity = flags.identity.empty() ? kubeclient::DefaultLeaderIdentity() : flags.identity;
  const std::string lease = absl::StrCat(config.namespace_name, "/", config.lease_name);
  observability.Observe(config);
  kubeclient::RestOptions rest_options;
  rest_options.max_attempts = 1;
  rest_options.timeout = config.renew_deadline / 2;
  rest_options.user_agent = "topofit/leader-election";
  observability.Observe(rest_options, "leader_election");
  LeaderElection election;
  absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> rest = ConnectToCluster(kubeconfig, rest_options);
  if (!rest.ok()) return Prefixed("leader election client", rest.status());
  election.rest = *std::move(rest);
  absl::StatusOr<std::unique_ptr<kubeclient::LeaderElector>> elector =
      kubeclient::LeaderElector::Create(*election.rest, std::move(config));
  if (!elector.ok()) return Prefixed("--leader-elect", elector.status());
  election.elector = *std::move(elector);
  election.elector->Start();
  server::LogEvent(log, "leader_election", {{"lease", lease}, {"identity", election.elector->identity()}});
  return election;
}

server::ReadinessCheck LeaderReadiness(const kubeclient::LeaderElector& elector) {
  return {"leader-election", [&elector] {
            if (elector.IsLeader()) return std::string();
            const std::string holder = elector.holder();
            return holder.empty() ? std::string("not the leader: no replica holds the Lease")
                                  : absl::StrCat("not the leader: the Lease is held by ", holder);
          }};
}

}  // namespace topofit::cli
