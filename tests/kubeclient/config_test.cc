#include "kubeclient/config.h"

#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "tests/kube/status_matchers.h"

namespace topofit::kubeclient {
namespace {

// An environment whose variables and files are maps; reading anything else fails as a missing file would.
struct FakeEnvironment {
  std::map<std::string, std::string> vars;
  std::map<std::string, std::string> files;

  Environment Get() const {
    Environment env;
    env.get_env = [this](const std::string& name) -> std::optional<std::string> {
      auto it = vars.find(name);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
    env.read_file = [this](const std::string& path) -> absl::StatusOr<std::string> {
      auto it = files.find(path);
      if (it == files.end()) return absl::NotFoundError(absl::StrCat("cannot read ", path));
      return it->second;
    };
    return env;
  }
};

// A kubeconfig with one context "ctx" -> cluster "c" and user "u", with the given bodies (already indented
// for their place in the YAML).
std::string Kubeconfig(const std::string& cluster_body, const std::string& user_body) {
  return absl::StrCat(R"(apiVersion: v1
kind: Config
current-context: ctx
contexts:
- name: other
  context: {cluster: nowhere, user: nobody}
- name: ctx
  context:
    cluster: c
    user: u
    namespace: team
clusters:
- name: c
  cluster:
)",
                      cluster_body, R"(
users:
- name: u
  user:
)",
                      user_body, "\n");
}

TEST_CASE("kubeconfig with a bearer token and inline CA data", "[kubeconfig]") {
  const std::string cluster = absl::StrCat("    server: https://10.0.0.1:6443\n    certificate-authority-data: ",
                                           absl::Base64Escape("CA PEM"));
  const absl::StatusOr<ClusterConfig> config = LoadKubeconfig(Kubeconfig(cluster, "    token: abc.def"), "/home/me/.kube",
                                                              FakeEnvironment{}.Get());
  REQUIRE_OK(config);
  CHECK(config->server == "https://10.0.0.1:6443");
  CHECK(config->ca_pem == "CA PEM");
  CHECK(config->bearer_token == "abc.def");
  CHECK(config->bearer_token_file.empty());
  CHECK(config->client_cert_pem.empty());
  CHECK_FALSE(config->insecure_skip_tls_verify);
}

TEST_CASE("kubeconfig with client certificate data", "[kubeconfig]") {
  const std::string user = absl::StrCat("    client-certificate-data: ", absl::Base64Escape("CERT PEM"),
                                        "\n    client-key-data: ", absl::Base64Escape("KEY PEM"));
  const absl::StatusOr<ClusterConfig> config =
      LoadKubeconfig(Kubeconfig("    server: https://api.example:443\n    insecure-skip-tls-verify: true", user),
                     "/k", FakeEnvironment{}.Get());
  REQUIRE_OK(config);
  CHECK(config->client_cert_pem == "CERT PEM");
  CHECK(config->client_key_pem == "KEY PEM");
  CHECK(config->bearer_token.empty());
  CHECK(config->insecure_skip_tls_verify);
}

TEST_CASE("kubeconfig file paths are relative to the kubeconfig's directory", "[kubeconfig]") {
  FakeEnvironment env;
  env.files["/etc/kube/pki/ca.crt"] = "CA FROM FILE";
  env.files["/etc/kube/pki/client.crt"] = "CERT FROM FILE";
  env.files["/abs/client.key"] = "KEY FROM FILE";
  env.files["/etc/kube/token"] = "tok-from-file\n";
  const absl::StatusOr<ClusterConfig> config = LoadKubeconfig(
      Kubeconfig("    server: https://h\n    certificate-authority: pki/ca.crt",
                 "    client-certificate: pki/client.crt\n    client-key: /abs/client.key\n    tokenFile: token"),
      "/etc/kube", env.Get());
  REQUIRE_OK(config);
  CHECK(config->ca_pem == "CA FROM FILE");
  CHECK(config->client_cert_pem == "CERT FROM FILE");
  CHECK(config->client_key_pem == "KEY FROM FILE");
  CHECK(config->bearer_token == "tok-from-file");  // trailing newline trimmed
  CHECK(config->bearer_token_file == "/etc/kube/token");
}

TEST_CASE("kubeconfig errors", "[kubeconfig]") {
  struct Case {
    const char* name;
    std::string yaml;
    absl::StatusCode code;
    const char* message;
  };
  const std::string ok_cluster = "    server: https://h";
  const std::vector<Case> cases = {
      {"missing context",
       "current-context: gone\ncontexts: []\nclusters: []\nusers: []\n", absl::StatusCode::kInvalidArgument,
       "context \"gone\" not found"},
      {"no current-context", "clusters: []\n", absl::StatusCode::kInvalidArgument, "no current-context"},
      {"exec plugin",
       Kubeconfig(ok_cluster, "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: aws"),
       absl::StatusCode::kUnimplemented, "exec credential plugins"},
      {"auth-provider plugin", Kubeconfig(ok_cluster, "    auth-provider:\n      name: gcp"),
       absl::StatusCode::kUnimplemented, "auth-provider"},
      {"malformed YAML", "current-context: [unclosed\n  : :", absl::StatusCode::kInvalidArgument,
       "malformed kubeconfig"},
      {"wrong node type", "current-context: {a: b}\n", absl::StatusCode::kInvalidArgument, "malformed kubeconfig"},
      {"not a map", "- just\n- a list\n", absl::StatusCode::kInvalidArgument, "not a YAML map"},
      {"empty document", "", absl::StatusCode::kInvalidArgument, "not a YAML map"},
      {"cluster without server", Kubeconfig("    insecure-skip-tls-verify: true", "    token: t"),
       absl::StatusCode::kInvalidArgument, "has no server"},
      {"bad base64", Kubeconfig("    server: https://h\n    certificate-authority-data: '%%%'", "    token: t"),
       absl::StatusCode::kInvalidArgument, "not valid base64"},
      {"missing CA file", Kubeconfig("    server: https://h\n    certificate-authority: ca.crt", "    token: t"),
       absl::StatusCode::kNotFound, "/k/ca.crt"},
      {"certificate without key",
       Kubeconfig(ok_cluster, absl::StrCat("    client-certificate-data: ", absl::Base64Escape("C"))),
       absl::StatusCode::kInvalidArgument, "given together"},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      CHECK_STATUS(LoadKubeconfig(c.yaml, "/k", FakeEnvironment{}.Get()), c.code, c.message);
    }
  }
}

TEST_CASE("LoadClusterConfig names the kubeconfig file in errors", "[kubeconfig]") {
  FakeEnvironment env;
  env.files["/home/me/.kube/config"] = "current-context: x\n";
  CHECK_STATUS(LoadClusterConfig("/home/me/.kube/config", env.Get()), absl::StatusCode::kInvalidArgument,
               "kubeconfig /home/me/.kube/config: context \"x\" not found");
  CHECK_STATUS(LoadClusterConfig("/nope", env.Get()), absl::StatusCode::kNotFound, "/nope");
}

TEST_CASE("in-cluster config from the service account", "[in-cluster]") {
  FakeEnvironment env;
  env.vars["KUBERNETES_SERVICE_HOST"] = "10.96.0.1";
  env.vars["KUBERNETES_SERVICE_PORT"] = "443";
  env.files["/var/run/secrets/kubernetes.io/serviceaccount/token"] = "sa-token\n";
  env.files["/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"] = "CLUSTER CA";

  SECTION("an empty kubeconfig path means in-cluster") {
    const absl::StatusOr<ClusterConfig> config = LoadClusterConfig("", env.Get());
    REQUIRE_OK(config);
    CHECK(config->server == "https://10.96.0.1:443");
    CHECK(config->bearer_token == "sa-token");
    CHECK(config->bearer_token_file == "/var/run/secrets/kubernetes.io/serviceaccount/token");
    CHECK(config->ca_pem == "CLUSTER CA");
  }
  SECTION("an IPv6 service address is bracketed") {
    env.vars["KUBERNETES_SERVICE_HOST"] = "fd00::1";
    const absl::StatusOr<ClusterConfig> config = InClusterConfig(env.Get());
    REQUIRE_OK(config);
    CHECK(config->server == "https://[fd00::1]:443");
  }
  SECTION("outside a cluster") {
    env.vars.erase("KUBERNETES_SERVICE_PORT");
    CHECK_STATUS(InClusterConfig(env.Get()), absl::StatusCode::kFailedPrecondition, "KUBERNETES_SERVICE_HOST");
  }
  SECTION("no token mounted") {
    env.files.erase("/var/run/secrets/kubernetes.io/serviceaccount/token");
    CHECK_STATUS(InClusterConfig(env.Get()), absl::StatusCode::kNotFound, "serviceaccount/token");
  }
}

TEST_CASE("OwnNamespace: POD_NAMESPACE, else the service account's namespace, else default", "[in-cluster]") {
  FakeEnvironment env;
  CHECK(OwnNamespace(env.Get()) == "default");
  env.files["/var/run/secrets/kubernetes.io/serviceaccount/namespace"] = "topofit-system\n";
  CHECK(OwnNamespace(env.Get()) == "topofit-system");
  env.vars["POD_NAMESPACE"] = "from-downward-api";
  CHECK(OwnNamespace(env.Get()) == "from-downward-api");
}

}  // namespace
}  // namespace topofit::kubeclient
