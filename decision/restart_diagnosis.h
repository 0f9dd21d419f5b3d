#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "kube/container_status.h"

namespace topofit::decision {

// Why a GPU pod's container restarted, as an on-call engineer sorts it first: a fault of the GPU (send the
// node to repair), memory (raise a limit, shrink a batch), the pod taken away (eviction, preemption),
// something the container never ran with (image, configuration), or the application itself.
enum class RestartCause {
  kGpuFault,          // an unhealthy GPU of the pod, or a hardware Xid
  kOutOfMemory,       // the container's memory limit (OOMKilled)
  kGpuOutOfMemory,    // the GPU's memory: CUDA said so in the termination message or an event
  kEviction,          // the pod is being disrupted (DisruptionTarget: preemption, eviction, taint, kubelet)
  kImageOrConfig,     // the image or the container's configuration: it could not start
  kLivenessProbe,     // the kubelet killed it after failed liveness probes
  kApplicationError,  // it exited non-zero (or was killed) for a reason of its own
  kCompleted,         // it exited 0 and was started again (restartPolicy Always)
  kUnknown,           // nothing recorded says how it ended
};

absl::string_view RestartCauseName(RestartCause cause);  // "gpu-fault", "oom", "gpu-oom", ...

// What is known of one restart of one container.
struct RestartEvidence {
  kube::ContainerStatus container;    // after the restart: lastState.terminated is the run that ended
  std::vector<std::string> warnings;  // the pod's Warning events, "Reason: message"
  std::vector<int> unhealthy_gpus;    // of the pod's GPUs, those its node reports unhealthy
  std::vector<int> xids;              // Xid codes reported for the pod's GPUs
  std::string disruption;             // the reason of a DisruptionTarget condition that is True, else ""
};

struct RestartDiagnosis {
  RestartCause cause = RestartCause::kUnknown;
  std::string reason;     // one line, the evidence that decided it
  std::vector<int> xids;  // every Xid seen, in order of first mention
};

// The first rule that the evidence meets, in the order of RestartCause. Pure.
RestartDiagnosis DiagnoseRestart(const RestartEvidence& evidence);

// RestartEvidence::unhealthy_gpus: of the GPUs a pod holds (its topofit.io/gpu-ids), those its node's agent
// reports unhealthy (topofit.io/unhealthy-gpus), ascending. Empty when either is absent or does not parse:
// no evidence is not a GPU fault.
std::vector<int> PodGpusReportedUnhealthy(absl::string_view pod_gpu_ids, absl::string_view node_unhealthy_gpus);

// Xid codes written as the NVIDIA driver logs them ("NVRM: Xid (PCI:0000:3b:00): 79, pid=...") or as
// "Xid 79", in order, each once.
std::vector<int> XidsIn(absl::string_view text);

// Xids NVIDIA's catalogue attributes to the application (13 graphics engine exception, 31 memory page
// fault, 43 GPU stopped processing, 45 preemptive cleanup): the GPU itself is fine. Any other is treated
// as the GPU's fault.
bool IsApplicationXid(int xid);

}  // namespace topofit::decision
