#pragma once

// A node's folders for the agent in a temp directory, removed with the object: device-plugins/ (the fake
// kubelet's socket and the agent's), pod-resources/, and bin/nvidia-smi, a shell script printing
// bin/query.csv or bin/topo.txt (the g5-48xlarge node of test_node.h to start with) and failing as a
// driver-less nvidia-smi does while bin/broken exists.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "agent/agent.h"
#include "tests/agent/test_node.h"

namespace topofit::agent::testing {

inline constexpr char kNvidiaSmiScript[] = R"(#!/bin/sh
d=$(dirname "$0")
if [ -e "$d/broken" ]; then
  echo "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver." >&2
  exit 9
fi
if [ "$1" = "topo" ]; then cat "$d/topo.txt"; else cat "$d/query.csv"; fi
)";

class NodeDir {
 public:
  NodeDir() {
    static int counter = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("topofit-agent-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    std::filesystem::remove_all(dir_);
    for (const char* sub : {"device-plugins", "pod-resources", "bin"}) std::filesystem::create_directories(dir_ / sub);
    Write("bin/nvidia-smi", kNvidiaSmiScript);
    std::filesystem::permissions(dir_ / "bin" / "nvidia-smi", std::filesystem::perms::owner_all);
    Write("bin/query.csv", G5Query());
    Write("bin/topo.txt", G5Topo());
  }
  ~NodeDir() { std::filesystem::remove_all(dir_); }
  NodeDir(const NodeDir&) = delete;
  NodeDir& operator=(const NodeDir&) = delete;

  // Written whole and renamed into place, so the script never prints half a file.
  void Write(const std::string& name, const std::string& content) const {
    const std::filesystem::path path = dir_ / name;
    std::ofstream(path.string() + ".tmp") << content;
    std::filesystem::rename(path.string() + ".tmp", path);
  }

  const std::filesystem::path& path() const { return dir_; }
  std::string plugins() const { return (dir_ / "device-plugins").string(); }
  std::string pod_resources_socket() const { return (dir_ / "pod-resources" / "kubelet.sock").string(); }

  // Options for an agent on `node` with these folders, on test time scales (50 ms health checks, kubelet
  // socket checks and watch backoffs of tens of milliseconds).
  AgentOptions Options(const std::string& node) const {
    AgentOptions options;
    options.node_name = node;
    options.nvidia_smi = (dir_ / "bin" / "nvidia-smi").string();
    options.health_interval = absl::Milliseconds(50);
    options.device_plugin_dir = plugins();
    options.pod_resources_socket = pod_resources_socket();
    options.correction_interval = absl::Milliseconds(100);
    options.kubelet_poll = absl::Milliseconds(50);
    options.pod_watch.initial_backoff = absl::Milliseconds(20);
    options.pod_watch.max_backoff = absl::Milliseconds(100);
    return options;
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace topofit::agent::testing
