#include "kubeclient/config.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace topofit::kubeclient {
namespace {

std::string ResolvePath(absl::string_view base_dir, const std::string& path) {
  if (path.empty() || std::filesystem::path(path).is_absolute() || base_dir.empty()) return path;
  return (std::filesystem::path(std::string(base_dir)) / path).string();
}

// The scalar at `map[key]`, or "" when absent. Throws YAML::Exception when it is not a scalar; the caller
// turns that into InvalidArgument.
std::string Scalar(const YAML::Node& map, const char* key) {
  const YAML::Node value = map[key];
  if (!value || value.IsNull()) return "";
  return value.as<std::string>();
}

// Finds the entry called `name` in a kubeconfig list such as `clusters:` and returns its `field` map.
absl::StatusOr<YAML::Node> NamedEntry(const YAML::Node& root, const char* list, const char* field,
                                      const std::string& name) {
  const YAML::Node entries = root[list];
  if (entries && entries.IsSequence()) {
    for (const YAML::Node& entry : entries) {
      if (entry.IsMap() && Scalar(entry, "name") == name) {
        const YAML::Node body = entry[field];
        if (!body || !body.IsMap()) {
          return absl::InvalidArgumentError(absl::StrCat(list, " entry \"", name, "\" has no ", field, " map"));
        }
        return body;
      }
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(field, " \"", name, "\" not found in ", list));
}

// `<key>-data` (base64) wins over `<key>` (a file path), as in client-go.
absl::StatusOr<std::string> DataOrFile(const YAML::Node& map, const std::string& key, absl::string_view base_dir,
                                       const Environment& env) {
  const std::string data = Scalar(map, (key + "-data").c_str());
  if (!data.empty()) {
    std::string decoded;
    if (!absl::Base64Unescape(absl::string_view(data), &decoded)) {
      return absl::InvalidArgumentError(absl::StrCat(key, "-data is not valid base64"));
    }
    return decoded;
  }
  const std::string file = Scalar(map, key.c_str());
  if (file.empty()) return std::string();
  return env.read_file(ResolvePath(base_dir, file));
}

absl::StatusOr<ClusterConfig> ParseKubeconfig(const YAML::Node& root, absl::string_view base_dir,
                                              const Environment& env) {
  if (!root.IsMap()) return absl::InvalidArgumentError("kubeconfig is not a YAML map");
  const std::string context_name = Scalar(root, "current-context");
  if (context_name.empty()) return absl::InvalidArgumentError("kubeconfig has no current-context");
  // Only const access below: yaml-cpp's non-const operator[] inserts missing keys.
  const absl::StatusOr<YAML::Node> context = NamedEntry(root, "contexts", "context", context_name);
  if (!context.ok()) return context.status();
  const std::string cluster_name = Scalar(*context, "cluster");
  const std::string user_name = Scalar(*context, "user");
  const absl::StatusOr<YAML::Node> cluster = NamedEntry(root, "clusters", "cluster", cluster_name);
  if (!cluster.ok()) return cluster.status();

  ClusterConfig config;
  config.server = Scalar(*cluster, "server");
  if (config.server.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("cluster \"", cluster_name, "\" has no server"));
  }
  if (const YAML::Node skip = (*cluster)["insecure-skip-tls-verify"]; skip && !skip.IsNull()) {
    config.insecure_skip_tls_verify = skip.as<bool>();
  }
  absl::StatusOr<std::string> ca = DataOrFile(*cluster, "certificate-authority", base_dir, env);
  if (!ca.ok()) return ca.status();
  config.ca_pem = *std::move(ca);

  // A context may name no user (anonymous access).
  if (user_name.empty()) return config;
  const absl::StatusOr<YAML::Node> user = NamedEntry(root, "users", "user", user_name);
  if (!user.ok()) return user.status();
  if ((*user)["exec"]) {
    return absl::UnimplementedError(absl::StrCat("user \"", user_name,
                                                 "\": exec credential plugins are not supported; use a token, "
                                                 "a client certificate, or run in-cluster"));
  }
  if ((*user)["auth-provider"]) {
    return absl::UnimplementedError(
        absl::StrCat("user \"", user_name, "\": auth-provider plugins are not supported"));
  }
  if (!Scalar(*user, "username").empty() || !Scalar(*user, "password").empty()) {
    return absl::UnimplementedError(absl::StrCat("user \"", user_name, "\": basic auth is not supported"));
  }
  config.bearer_token = Scalar(*user, "token");
  if (const std::string token_file = Scalar(*user, "tokenFile"); !token_file.empty()) {
    config.bearer_token_file = ResolvePath(base_dir, token_file);
    absl::StatusOr<std::string> token = env.read_file(config.bearer_token_file);
    if (!token.ok()) return token.status();
    config.bearer_token = std::string(absl::StripAsciiWhitespace(*token));
  }
  absl::StatusOr<std::string> cert = DataOrFile(*user, "client-certificate", base_dir, env);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = DataOrFile(*user, "client-key", base_dir, env);
  if (!key.ok()) return key.status();
  if (cert->empty() != key->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("user \"", user_name, "\": client certificate and key must be given together"));
  }
  config.client_cert_pem = *std::move(cert);
  config.client_key_pem = *std::move(key);
  return config;
}

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("error reading ", path));
  return contents.str();
}

Environment RealEnvironment() {
  Environment env;
  env.get_env = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  env.read_file = ReadFileToString;
  return env;
}

absl::StatusOr<ClusterConfig> LoadKubeconfig(absl::string_view yaml_text, absl::string_view base_dir,
                                             const Environment& env) {
  // yaml-cpp reports syntax errors and wrong node types by throwing; none may escape as a crash.
  try {
    return ParseKubeconfig(YAML::Load(std::string(yaml_text)), base_dir, env);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed kubeconfig: ", e.what()));
  }
}

absl::StatusOr<ClusterConfig> InClusterConfig(const Environment& env) {
  const std::optional<std::string> host = env.get_env("KUBERNETES_SERVICE_HOST");
  const std::optional<std::string> port = env.get_env("KUBERNETES_SERVICE_PORT");
  if (!host || host->empty() || !port || port->empty()) {
    return absl::FailedPreconditionError(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set "
        "(or pass a kubeconfig)");
  }
  ClusterConfig config;
  // An IPv6 service IP needs brackets in a URL, as Go's net.JoinHostPort writes it.
  const bool ipv6 = host->find(':') != std::string::npos;
  config.server = absl::StrCat("https://", ipv6 ? "[" : "", *host, ipv6 ? "]" : "", ":", *port);
  config.bearer_token_file = absl::StrCat(kServiceAccountDir, "/token");
  absl::StatusOr<std::string> token = env.read_file(config.bearer_token_file);
  if (!token.ok()) return token.status();
  config.bearer_token = std::string(absl::StripAsciiWhitespace(*token));
  absl::StatusOr<std::string> ca = env.read_file(absl::StrCat(kServiceAccountDir, "/ca.crt"));
  if (!ca.ok()) return ca.status();
  config.ca_pem = *std::move(ca);
  return config;
}

std::string OwnNamespace(const Environment& env) {
  if (const std::optional<std::string> pod_namespace = env.get_env("POD_NAMESPACE");
      pod_namespace.has_value() && !pod_namespace->empty()) {
    return *pod_namespace;
  }
  if (absl::StatusOr<std::string> file = env.read_file(absl::StrCat(kServiceAccountDir, "/namespace")); file.ok()) {
    const absl::string_view trimmed = absl::StripAsciiWhitespace(*file);
    if (!trimmed.empty()) return std::string(trimmed);
  }
  return "default";
}

absl::StatusOr<ClusterConfig> LoadClusterConfig(const std::string& kubeconfig_path, const Environment& env) {
  if (kubeconfig_path.empty()) return InClusterConfig(env);
  absl::StatusOr<std::string> text = env.read_file(kubeconfig_path);
  if (!text.ok()) return text.status();
  absl::StatusOr<ClusterConfig> config =
      LoadKubeconfig(*text, std::filesystem::path(kubeconfig_path).parent_path().string(), env);
  if (!config.ok()) {
    return absl::Status(config.status().code(),
                        absl::StrCat("kubeconfig ", kubeconfig_path, ": ", config.status().message()));
  }
  return config;
}

}  // namespace topofit::kubeclient
