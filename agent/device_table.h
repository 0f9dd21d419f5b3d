#pragma once

// The devices the agent offers the kubelet: one per GPU, its UUID as device ID, its NUMA node and health.
// Set once the GPUs are discovered; health changes with each re-check. Every change bumps a version that
// ListAndWatch streams wait on, so a change reaches the kubelet at once.
//
// Thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/gpu_discovery.h"
#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::agent {

struct DeviceInfo {
  std::string id;  // the GPU's UUID
  topology::GpuId gpu;
  int numa_node = -1;  // -1 unknown: no topology hint is sent
  bool healthy = true;
};

// What a reader sees at one moment.
struct DeviceSnapshot {
  int64_t version = 0;  // 0: no GPUs discovered yet
  std::vector<DeviceInfo> devices;  // by GPU index
  std::optional<topology::Topology> topology;

  // The GPU a device ID names; nullopt for an ID this node does not have.
  std::optional<topology::GpuId> GpuOf(absl::string_view device_id) const;
  topology::GpuSet Healthy() const;
};

class DeviceTable {
 public:
  // Replaces the devices with the discovered GPUs, every one healthy unless its query row showed an error.
  void SetDiscovered(const NodeGpus& gpus);
  // Applies a re-check (HealthAfterCheck, by GPU index); true when any device changed.
  bool SetHealth(const std::vector<bool>& healthy);

  DeviceSnapshot Snapshot() const;
  // Waits until the version differs from `seen` or `timeout` passes; returns the current version.
  int64_t WaitForChange(int64_t seen, absl::Duration timeout) const;

 private:
  mutable absl::Mutex mu_;
  DeviceSnapshot current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topofit::agent
