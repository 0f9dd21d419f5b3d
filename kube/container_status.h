#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace topofit::kube {

// How a container last ended (containerStatuses[].lastState.terminated): what a restart left behind.
struct ContainerTermination {
  std::string reason;   // "OOMKilled", "Error", "Completed", "ContainerCannotRun", ...
  int32_t exit_code = 0;
  int32_t signal = 0;
  std::string message;  // the container's termination message (terminationMessagePath), size-capped by the kubelet
  int64_t finished_at = 0;  // Unix seconds; 0 when absent
  bool operator==(const ContainerTermination&) const = default;
};

// A pod's status.containerStatuses[] (and initContainerStatuses[]), reduced to what a restart record reads.
struct ContainerStatus {
  std::string name;
  bool init = false;          // from initContainerStatuses
  int32_t restart_count = 0;
  std::string waiting_reason;  // state.waiting.reason: "CrashLoopBackOff", "ImagePullBackOff", ...
  std::string waiting_message;
  std::optional<ContainerTermination> last_termination;  // lastState.terminated
  bool operator==(const ContainerStatus&) const = default;
};

}  // namespace topofit::kube
