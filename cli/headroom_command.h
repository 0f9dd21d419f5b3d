#pragma once

// `topofit headroom`: the headroom controller (docs/headroom.md) — keeps warm capacity shaped like the next
// burst, as cluster-autoscaler CapacityBuffers or, where CA serves none, placeholder Deployments.

#include <cstdint>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/leader_election_flags.h"
#include "history/store.h"

namespace topofit::cli {

struct HeadroomCommandOptions {
  std::string kubeconfig;  // empty: in-cluster service account
  std::string namespace_name = "topofit-system";  // where the buffers or placeholders live
  std::string api = "auto";  // auto (discovery), capacity-buffers, placeholders
  double fill_rate = 0.8;
  double window_minutes = 60;
  double boot_minutes = 10;
  double shrink_after_minutes = 20;
  int budget_gpus = 0;
  double interval_seconds = 10;
  std::string address = "127.0.0.1";  // the Deployment says 0.0.0.0: the kubelet probes the pod's IP
  int ops_port = 9094;                // plain HTTP: /healthz /readyz /metrics
  std::string decision_db;  // empty: the changes are logged, not recorded
  int64_t decision_db_max_bytes = history::kDefaultMaxBytes;
  std::string log_format = "text";
  std::string log_level = "info";
  // Of several replicas only the holder of a coordination.k8s.io Lease writes; the others observe demand
  // and report not ready.
  LeaderElectionFlags leader_election{.lease_name = "topofit-headroom"};
};

// Runs the controller until SIGTERM or SIGINT; returns the exit code (1 for bad options or start-up
// failures, with a message on stderr). `on_listening(ops_port)` is called once the ops server serves.
int RunHeadroom(const HeadroomCommandOptions& options, const std::function<void(int)>& on_listening = {});

void AddHeadroomCommand(CLI::App& app, int& exit_code);

}  // namespace topofit::cli
