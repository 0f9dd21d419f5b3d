#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace topofit::cli {

// The options of `topofit extender`.
struct ExtenderOptions {
  std::string address = "0.0.0.0";
  int port = 8443;              // the extender verbs (HTTPS with --tls-cert/--tls-key)
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;    // optional: require client certificates signed by this CA
  int ops_port = 9090;          // plain HTTP: /healthz /readyz /metrics /preferences
  std::string admin_token_file; // bearer token for /admin/*; empty: admin endpoints disabled
  std::string log_format = "text";
  std::string log_level = "info";
  int64_t max_body_bytes = int64_t{64} << 20;
  std::string kubeconfig;       // empty: in-cluster service account
};

// Runs the extender until SIGTERM or SIGINT; returns the exit code (1 for bad options or start-up
// failures, each with a message on stderr). `on_listening(api_port, ops_port)` is called once both
// servers serve (tests use it to learn the ports when they ask for port 0).
int RunExtender(const ExtenderOptions& options, const std::function<void(int, int)>& on_listening = {});

void AddExtenderCommand(CLI::App& app, int& exit_code);

}  // namespace topofit::cli
