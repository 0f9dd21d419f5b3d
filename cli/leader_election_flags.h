#pragma once

// --leader-elect and its Lease, for the commands that run as several replicas of which one acts (the
// extender binds, the headroom controller writes): the flags, the elector on a client of its own, and the
// readiness check that fails on the others.

#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/logger.h>

#include "absl/status/statusor.h"
#include "cli/kube_observability.h"
#include "kubeclient/leader_election.h"
#include "kubeclient/rest_client.h"
#include "server/ops_endpoints.h"

namespace topofit::cli {

struct LeaderElectionFlags {
  bool enabled = false;
  std::string lease_name{};
  std::string namespace_name{};  // empty: kubeclient::OwnNamespace()
  std::string identity{};        // empty: kubeclient::DefaultLeaderIdentity()
};

// The four flags; `acts` says what only the leader does ("binds", "writes the buffers"), for the help.
void AddLeaderElectionFlags(CLI::App& cmd, LeaderElectionFlags& flags, const std::string& acts);

struct LeaderElection {
  // The elector's own client (one attempt per request, a timeout under renew_deadline / 2, a rate limit no
  // other traffic competes for: renewals never queue behind a Binding or a watch). Declared first,
  // destroyed last.
  std::unique_ptr<kubeclient::RestClient> rest;
  // Started; destroying it releases the Lease.
  std::unique_ptr<kubeclient::LeaderElector> elector;
};

// Connects through `kubeconfig`, starts the elector and logs `leader_election` with the Lease and identity.
absl::StatusOr<LeaderElection> StartLeaderElection(const LeaderElectionFlags& flags, const std::string& kubeconfig,
                                                   spdlog::logger& log, KubeObservability& observability);

// /readyz's "leader-election": fails on a replica not holding the Lease, naming the holder.
server::ReadinessCheck LeaderReadiness(const kubeclient::LeaderElector& elector);

}  // namespace topofit::cli
