#pragma once

// --kubeconfig and --ledger, the same on `topofit extender`, `expander` and `serve`.

#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/logger.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/extender_command.h"
#include "kubeclient/rest_client.h"

namespace topofit::cli {

void AddKubeconfigFlag(CLI::App& cmd, std::string& kubeconfig);
// --ledger=memory|api.
void AddLedgerFlag(CLI::App& cmd, std::string& ledger);

// A client of the cluster `kubeconfig` names (the in-cluster service account when empty), with `options`
// (retries, timeout, rate limit). Errors name the config that failed.
absl::StatusOr<std::unique_ptr<kubeclient::RestClient>> ConnectToCluster(const std::string& kubeconfig,
                                                                         const kubeclient::RestOptions& options = {});

// "memory" keeps the process's in-memory ledger; "api" replaces it with the ledger in the Kubernetes API
// (kubeclient/api_ledger.h) on a client of its own, fed by a watch of pending pods started here
// (process.ledger_ready() holds once it has listed). Once per process, before anything uses the ledger.
absl::Status UseLedger(const std::string& ledger, const std::string& kubeconfig, ProcessState& process,
                       spdlog::logger& log);

}  // namespace topofit::cli
