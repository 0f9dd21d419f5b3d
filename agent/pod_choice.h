#pragma once

// Which devices the kubelet should give the container being admitted (pure; no I/O).
//
// Neither GetPreferredAllocation nor Allocate says which pod is being admitted. The extender recorded its
// choice on the pod at bind (`topofit.io/gpu-ids`, and the bind time `topofit.io/bound-at`), and the
// kubelet admits one pod at a time, so the pod being admitted is, among the pods bound here whose devices
// have not been given yet, the first bound whose chosen GPUs are all available and whose count matches.
// No such pod (a pod of another scheduler, an extender that did not run): topofit's own allocator on the
// available set (keeping the must-include devices), never an arbitrary pick.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/device_table.h"
#include "topology/gpu_set.h"

namespace topofit::agent {

// A pod bound to this node with the extender's choice, waiting for its devices.
struct ChosenPod {
  std::string key;  // namespace/name
  std::string uid;
  absl::Time bound_at = absl::InfiniteFuture();  // InfiniteFuture when the pod does not say
  int64_t created_seconds = 0;                   // the tie-break after bound_at, then uid
  topology::GpuSet chosen;
};

// Sorts pods into the order they were bound.
void SortInBindOrder(std::vector<ChosenPod>& pods);

// One container's request, as GetPreferredAllocation carries it.
struct ContainerRequest {
  std::vector<std::string> available;     // available_deviceIDs
  std::vector<std::string> must_include;  // must_include_deviceIDs
  int size = 0;                           // allocation_size
};

struct PreferredDevices {
  std::vector<std::string> device_ids;  // in GPU index order
  const ChosenPod* pod = nullptr;       // whose choice this is; null: the allocator's (a fallback)
};

// The devices to prefer. `pods` in bind order. InvalidArgument for a request the agent cannot answer
// truthfully: a size <= 0 or larger than the healthy available devices, a device ID this node does not
// have, one listed twice, a must-include ID that is not available, or more must-include IDs than the size.
absl::StatusOr<PreferredDevices> PreferDevices(const DeviceSnapshot& devices, const std::vector<ChosenPod>& pods,
                                               const ContainerRequest& request);

// The GPUs the device IDs name. InvalidArgument for an ID this node does not have, or one listed twice.
absl::StatusOr<topology::GpuSet> GpusOf(const DeviceSnapshot& devices, const std::vector<std::string>& device_ids,
                                        absl::string_view what);

// The pod an Allocate of `given` is for: the first in bind order whose choice is exactly `given`, else the
// first whose count matches (the kubelet chose other devices: what the container really holds wins, and the
// pod-resources correction rewrites its `topofit.io/gpu-ids`). Null when no pod waits for that many GPUs.
const ChosenPod* PodForAllocation(const std::vector<ChosenPod>& pods, topology::GpuSet given);

}  // namespace topofit::agent
