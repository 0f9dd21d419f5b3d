#pragma once

// A scratch directory for command tests, removed with the object, holding a kubeconfig that points at an
// API server nobody needs to reach (the extender calls the API only to bind) and any files a test adds.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace topofit::cli::testing {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : dir_(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
    Write("kubeconfig", R"(apiVersion: v1
kind: Config
current-context: test
contexts:
- name: test
  context: {cluster: test, user: test}
clusters:
- name: test
  cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}
users:
- name: test
  user: {token: test-token}
)");
  }
  ~ScratchDir() { std::filesystem::remove_all(dir_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  void Write(const char* name, const std::string& content) const { std::ofstream(dir_ / name) << content; }
  std::string path(const char* name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace topofit::cli::testing
