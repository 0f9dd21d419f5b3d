#pragma once

// A scratch directory for command tests, removed with the object, holding a kubeconfig that points at an
// API server nobody needs to reach (the extender calls the API only to bind) and any files a test adds.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace topofit::cli::testing {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : dir_(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
    Write("kubeconfig", Kubeconfig(R"(server: "https://127.0.0.1:1", insecure-skip-tls-verify: true)"));
  }
  ~ScratchDir() { std::filesystem::remove_all(dir_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // A kubeconfig whose one cluster is `cluster` (the YAML flow mapping's fields) and whose user has the
  // token "test-token".
  static std::string Kubeconfig(const std::string& cluster) {
    return absl::StrCat(R"(apiVersion: v1
kind: Config
current-context: test
contexts:
- name: test
  context: {cluster: test, user: test}
clusters:
- name: test
  cluster: {)", cluster, R"(}
users:
- name: test
  user: {token: test-token}
)");
  }

  void Write(const char* name, const std::string& content) const { std::ofstream(dir_ / name) << content; }
  std::string path(const char* name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace topofit::cli::testing
