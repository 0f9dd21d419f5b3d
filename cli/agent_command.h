#pragma once

// `topofit agent`: the node agent (agent/agent.h) and its ops port.

#include <cstdint>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "history/store.h"

namespace topofit::cli {

struct AgentCommandOptions {
  std::string node_name;  // empty: $NODE_NAME
  std::string nvidia_smi = "nvidia-smi";
  double health_interval_seconds = 30;
  std::string resource_name = "nvidia.com/gpu";
  std::string device_plugin_dir = "/var/lib/kubelet/device-plugins";
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::string device_list_strategy = "envvar";
  double correction_interval_seconds = 30;
  std::string address = "127.0.0.1";  // the DaemonSet says 0.0.0.0: the kubelet probes the pod's IP
  int ops_port = 9092;  // plain HTTP: /healthz /readyz /metrics
  std::string kubeconfig;  // empty: in-cluster service account
  std::string decision_db;  // empty: the kubelet's allocations are not recorded
  int64_t decision_db_max_bytes = history::kDefaultMaxBytes;
  std::string log_format = "text";
  std::string log_level = "info";
};

// Runs the agent until SIGTERM or SIGINT; returns the exit code (1 for bad options or start-up failures,
// with a message on stderr). `on_listening(ops_port)` is called once the ops server serves.
int RunAgent(const AgentCommandOptions& options, const std::function<void(int)>& on_listening = {});

void AddAgentCommand(CLI::App& app, int& exit_code);

}  // namespace topofit::cli
