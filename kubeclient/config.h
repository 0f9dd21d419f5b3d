#pragma once

// Where the API server is and how to authenticate to it: from a kubeconfig file (as kubectl reads it) or
// from the service account Kubernetes mounts into every pod (as client-go's rest.InClusterConfig does).

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace topofit::kubeclient {

struct ClusterConfig {
  std::string server;  // e.g. "https://10.0.0.1:443"; may carry a path prefix behind a proxy
  std::string ca_pem;  // PEM bundle the server certificate must chain to; empty: the system's roots
  std::string bearer_token;
  // When set, the token is re-read from this file about once a minute: projected service account tokens
  // are rotated by the kubelet and expire, so the value read at start-up goes stale in a long-lived server.
  std::string bearer_token_file;
  std::string client_cert_pem, client_key_pem;  // mutual TLS, both or neither
  bool insecure_skip_tls_verify = false;
};

// The process environment, injected so tests need no real variables or files at fixed paths.
struct Environment {
  std::function<std::optional<std::string>(const std::string& name)> get_env;
  std::function<absl::StatusOr<std::string>(const std::string& path)> read_file;
};
Environment RealEnvironment();

// Reads a whole file; the error names the file.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

inline constexpr char kServiceAccountDir[] = "/var/run/secrets/kubernetes.io/serviceaccount";

// Follows current-context -> context -> cluster and user. Relative file paths (certificate-authority,
// client-certificate, client-key, tokenFile) are resolved against `base_dir`, the kubeconfig's directory.
// Errors: malformed YAML or a dangling reference -> InvalidArgument; exec and auth-provider plugins and
// basic auth -> Unimplemented; an unreadable referenced file -> that read's error.
absl::StatusOr<ClusterConfig> LoadKubeconfig(absl::string_view yaml_text, absl::string_view base_dir,
                                             const Environment& env = RealEnvironment());

// KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT and the service account's token and ca.crt. Outside a
// pod -> FailedPrecondition. A missing ca.crt is an error here, where client-go only logs it: the system's
// roots could not verify the cluster's own CA anyway.
absl::StatusOr<ClusterConfig> InClusterConfig(const Environment& env = RealEnvironment());

// The namespace this process runs in, where its own objects (the leader election Lease) belong: $POD_NAMESPACE
// (set from the downward API), else the service account's namespace file, else "default" (kubectl's).
std::string OwnNamespace(const Environment& env = RealEnvironment());

// An empty path means in-cluster; otherwise the kubeconfig at `kubeconfig_path`.
absl::StatusOr<ClusterConfig> LoadClusterConfig(const std::string& kubeconfig_path,
                                                const Environment& env = RealEnvironment());

}  // namespace topofit::kubeclient
