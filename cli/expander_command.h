#pragma once

// `topofit expander`: cluster-autoscaler's gRPC expander and its ops port.
// `topofit serve`: the extender and the expander in one process, sharing one ledger and one registry.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "absl/status/statusor.h"
#include "cli/extender_command.h"
#include "expander/expander_service.h"
#include "expander/grpc_server.h"
#include "kubeclient/claim_cache.h"
#include "kubeclient/compute_domain_cache.h"
#include "kubeclient/list_watcher.h"
#include "kubeclient/rest_client.h"
#include "ledger/ledger.h"
#include "server/http_server.h"

namespace topofit::cli {

// The options of `topofit expander`.
struct ExpanderOptions {
  // Loopback unless told: the manifests say 0.0.0.0 for both, cluster-autoscaler and Prometheus being
  // in other pods.
  std::string address = "127.0.0.1";
  int grpc_port = 8444;
  std::string tls_cert;       // cluster-autoscaler verifies it with --grpc-expander-cert
  std::string tls_key;
  std::string tls_client_ca;  // optional: require client certificates signed by this CA (CA sends none)
  bool insecure = false;      // plaintext gRPC, instead of the TLS files
  std::string ops_address = "127.0.0.1";
  int ops_port = 9091;        // plain HTTP: /healthz /readyz /metrics /intents
  std::string admin_token_file;  // opens /intents beyond loopback; empty: loopback only
  std::string prices_file;    // optional, see ReadPricesFile
  bool no_veto = false;       // fail open instead of vetoing when every GPU option would strand
  // Record the node group templates of peers without a client certificate as trusted: only when no one
  // but cluster-autoscaler can reach the gRPC port (ExpanderServiceOptions::trust_templates).
  bool trust_expander_templates = false;
  std::string log_format = "text";
  std::string log_level = "info";
  std::string kubeconfig;         // for --ledger=api; empty: in-cluster service account
  std::string ledger = "memory";  // or "api" (cli/ledger_flags.h)
  std::string decision_db;        // empty: the decision history in memory (cli/decision_history.h)
  int64_t decision_db_max_bytes = history::kDefaultMaxBytes;
  // The extender's (cli/extender_command.h); `serve` passes its extender's.
  std::string expected_node_boot = "5m";
  std::string max_topology_wait = "10m";
  // Watch ResourceClaims at this version of resource.k8s.io, so claim pods are ranked by their claims
  // (docs/dra.md); empty: not. `serve` reads its extender's claims instead.
  std::string dra_version;
  std::vector<std::string> dra_gpu_classes = {"gpu.nvidia.com"};
  // Watch ComputeDomains at this version of resource.nvidia.com, so their pods are ranked as gangs in one
  // NVLink domain (docs/gangs.md); empty: not. `serve` reads its extender's domains instead.
  std::string compute_domains_version;
};

// Price per node-hour by node group id, from a JSON object: {"p4d-us-east-1a": 32.77, "g5": 16.29}.
// Groups not listed take the price annotation of their template node, if any (decision/group_rank.h).
// Every value must be a finite number >= 0.
absl::StatusOr<std::map<std::string, double>> ReadPricesFile(const std::string& path);

// The expander, built on `process` but not yet listening: start it with
// expander::GrpcServer::Start(grpc, *service).
struct ExpanderParts {
  // With --dra: the claims the service reads, kept by a watch of their own (started).
  std::unique_ptr<kubeclient::RestClient> claim_rest;
  std::unique_ptr<kubeclient::ClaimCache> claims;
  std::unique_ptr<decision::ClaimSource> claim_source;
  std::unique_ptr<kubeclient::ListWatcher> claim_watch;  // feeds `claims`: declared after it, stopped first
  // With --compute-domains: the domains the service reads, kept by a watch of their own (started).
  std::unique_ptr<kubeclient::RestClient> domain_rest;
  std::unique_ptr<kubeclient::ComputeDomainCache> compute_domains;
  std::unique_ptr<decision::ComputeDomainSource> compute_domain_source;
  std::unique_ptr<kubeclient::ListWatcher> compute_domain_watch;  // feeds `compute_domains`, stopped first
  std::unique_ptr<expander::ExpanderMetrics> metrics;
  std::unique_ptr<expander::ExpanderService> service;
  expander::GrpcServerOptions grpc;
};
absl::StatusOr<ExpanderParts> BuildExpander(const ExpanderOptions& options, ProcessState& process,
                                            spdlog::logger& log);

// GET /intents: the ledger's unexpired intents as JSON (the ops port); they name pods, so only for callers
// on loopback or with `admin_token` (server::RequireLoopbackOrAdminToken).
void RegisterIntentsRoute(server::HttpServer& server, const ledger::Ledger& ledger, std::string admin_token);

// Runs the expander until SIGTERM or SIGINT; returns the exit code (1 for bad options or start-up failures,
// with a message on stderr). `on_listening(grpc_port, ops_port)` is called once both servers serve.
int RunExpander(const ExpanderOptions& options, const std::function<void(int, int)>& on_listening = {});

// `topofit serve`: the extender's options, plus the expander's own (its gRPC port and TLS client CA,
// --insecure, prices, veto). The address, TLS certificate and key, logging, the ops port, the kubeconfig
// and the ledger are the extender's, shared: one Service name, one certificate for both ports, one ledger.
struct ServeOptions {
  ExtenderOptions extender;
  ExpanderOptions expander;
};

// Runs both until SIGTERM or SIGINT. `on_listening(extender_port, grpc_port, ops_port)`.
int RunServe(const ServeOptions& options, const std::function<void(int, int, int)>& on_listening = {});

void AddExpanderCommand(CLI::App& app, int& exit_code);
void AddServeCommand(CLI::App& app, int& exit_code);

}  // namespace topofit::cli
