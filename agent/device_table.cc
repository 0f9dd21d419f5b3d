#include "agent/device_table.h"

namespace topofit::agent {

std::optional<topology::GpuId> DeviceSnapshot::GpuOf(absl::string_view device_id) const {
  for (const DeviceInfo& device : devices) {
    if (device.id == device_id) return device.gpu;
  }
  return std::nullopt;
}

topology::GpuSet DeviceSnapshot::Healthy() const {
  topology::GpuSet set;
  for (const DeviceInfo& device : devices) {
    if (device.healthy) set = set.with(device.gpu);
  }
  return set;
}

void DeviceTable::SetDiscovered(const NodeGpus& gpus) {
  absl::MutexLock lock(&mu_);
  current_.devices.clear();
  for (const QueriedGpu& gpu : gpus.queried) {
    const topology::GpuId id{gpu.index};
    current_.devices.push_back({gpu.uuid, id, gpus.topology.gpu(id).numa_node, !gpu.error});
  }
  current_.topology = gpus.topology;
  ++current_.version;
}

bool DeviceTable::SetHealth(const std::vector<bool>& healthy) {
  absl::MutexLock lock(&mu_);
  bool changed = false;
  for (size_t i = 0; i < current_.devices.size() && i < healthy.size(); ++i) {
    if (current_.devices[i].healthy != healthy[i]) {
      current_.devices[i].healthy = healthy[i];
      changed = true;
    }
  }
  if (changed) ++current_.version;
  return changed;
}

DeviceSnapshot DeviceTable::Snapshot() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

int64_t DeviceTable::WaitForChange(int64_t seen, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  const auto changed = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return current_.version != seen; };
  mu_.AwaitWithTimeout(absl::Condition(&changed), timeout);
  return current_.version;
}

}  // namespace topofit::agent
