#pragma once

// `topofit webhook`: the mutating admission webhook (docs/webhook.md) and its ops port.

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace topofit::cli {

// The options of `topofit webhook`.
struct WebhookOptions {
  // Loopback unless told: the manifests say 0.0.0.0, the API server calling from outside the pod.
  std::string address = "127.0.0.1";
  int port = 8445;           // HTTPS: POST /mutate
  std::string tls_cert;      // the API server verifies it with the webhook configuration's caBundle
  std::string tls_key;
  bool insecure = false;     // plain HTTP instead of the TLS files (tests; the API server calls HTTPS only)
  std::string ops_address = "127.0.0.1";
  int ops_port = 9093;       // plain HTTP: /livez /healthz /readyz /metrics (9092 is the agent's)
  std::string log_format = "text";
  std::string log_level = "info";
  int64_t max_body_bytes = int64_t{8} << 20;  // the API server sends objects of up to about 1.5 MiB
  std::string kubeconfig;    // empty: in-cluster service account
  // Where the expander publishes the node group templates (ConfigMap topofit-node-groups); empty: this
  // pod's own namespace (kubeclient::OwnNamespace), as the expander's.
  std::string namespace_name;
  std::string node_groups_poll = "30s";  // how often the ConfigMap is read again
};

// Runs the webhook until SIGTERM or SIGINT; returns the exit code (1 for bad options or start-up failures,
// with a message on stderr). `on_listening(port, ops_port)` is called once both servers serve.
int RunWebhook(const WebhookOptions& options, const std::function<void(int, int)>& on_listening = {});

void AddWebhookCommand(CLI::App& app, int& exit_code);

}  // namespace topofit::cli
