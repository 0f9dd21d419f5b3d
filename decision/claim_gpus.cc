#include "decision/claim_gpus.h"

#include <algorithm>
#include <utility>

namespace topofit::decision {
namespace {

// An attribute by its name in the driver's domain: unqualified, or qualified with the driver's name.
const kube::DeviceAttribute* AttributeOf(const kube::SliceDevice& device, const std::string& driver,
                                         absl::string_view name) {
  if (auto it = device.attributes.find(name); it != device.attributes.end()) return &it->second;
  if (auto it = device.attributes.find(std::string(driver) + "/" + std::string(name)); it != device.attributes.end()) {
    return &it->second;
  }
  return nullptr;
}

std::optional<std::string> StringAttribute(const kube::SliceDevice& device, const std::string& driver, absl::string_view name) {
  const kube::DeviceAttribute* value = AttributeOf(device, driver, name);
  return value != nullptr ? value->string_value : std::nullopt;
}

}  // namespace

std::set<std::string> DeviceGpuIndex::Upsert(const kube::ResourceSlice& slice) {
  std::set<std::string> changed;
  if (std::optional<std::string> pool = Drop(slice.metadata.name)) changed.insert(*std::move(pool));
  if (slice.driver != driver_ || slice.node_name.empty()) return changed;
  // Whole GPUs first, by index; then their parts (MIG devices), by their parent's uuid.
  std::map<std::string, DeviceGpu, std::less<>> gpus;  // by device name
  std::map<std::string, int, std::less<>> index_of_uuid;
  std::vector<SliceGpu> whole;
  for (const kube::SliceDevice& device : slice.devices) {
    const kube::DeviceAttribute* index = AttributeOf(device, driver_, "index");
    const std::optional<std::string> type = StringAttribute(device, driver_, "type");
    if (index == nullptr || !index->int_value || *index->int_value < 0 || (type && *type != "gpu")) continue;
    const int gpu = static_cast<int>(std::min<int64_t>(*index->int_value, 1 << 20));
    gpus[device.name] = DeviceGpu{slice.node_name, gpu};
    whole.push_back(SliceGpu{.index = gpu, .device = device});
    if (std::optional<std::string> uuid = StringAttribute(device, driver_, "uuid")) index_of_uuid[*uuid] = gpu;
  }
  for (const kube::SliceDevice& device : slice.devices) {
    const std::optional<std::string> parent = StringAttribute(device, driver_, "parentUUID");
    if (!parent) continue;
    if (auto it = index_of_uuid.find(*parent); it != index_of_uuid.end()) {
      gpus[device.name] = DeviceGpu{slice.node_name, it->second};
    }
  }
  Slice& known = slices_[slice.metadata.name];
  known.pool = slice.pool;
  known.node = slice.node_name;
  if (!whole.empty()) node_gpus_[slice.node_name][slice.metadata.name] = std::move(whole);
  for (auto& [name, gpu] : gpus) {
    devices_[{slice.pool, name}].insert_or_assign(slice.metadata.name, std::move(gpu));
    known.devices.push_back(name);
  }
  changed.insert(slice.pool);
  return changed;
}

std::set<std::string> DeviceGpuIndex::Remove(absl::string_view slice_name) {
  std::set<std::string> changed;
  if (std::optional<std::string> pool = Drop(slice_name)) changed.insert(*std::move(pool));
  return changed;
}

void DeviceGpuIndex::Clear() {
  slices_.clear();
  devices_.clear();
  node_gpus_.clear();
}

std::optional<std::string> DeviceGpuIndex::Drop(absl::string_view slice_name) {
  auto it = slices_.find(slice_name);
  if (it == slices_.end()) return std::nullopt;
  std::string pool = std::move(it->second.pool);
  if (auto node = node_gpus_.find(it->second.node); node != node_gpus_.end()) {
    if (auto of_slice = node->second.find(slice_name); of_slice != node->second.end()) node->second.erase(of_slice);
    if (node->second.empty()) node_gpus_.erase(node);
  }
  for (std::string& device : it->second.devices) {
    auto of_device = devices_.find(std::pair{pool, std::move(device)});
    if (of_device == devices_.end()) continue;
    if (auto by_slice = of_device->second.find(slice_name); by_slice != of_device->second.end()) {
      of_device->second.erase(by_slice);
    }
    if (of_device->second.empty()) devices_.erase(of_device);
  }
  slices_.erase(it);
  return pool;
}

std::optional<DeviceGpu> DeviceGpuIndex::Find(absl::string_view driver, absl::string_view pool,
                                              absl::string_view device) const {
  if (driver != driver_) return std::nullopt;
  auto it = devices_.find(std::pair{std::string(pool), std::string(device)});
  if (it == devices_.end() || it->second.empty()) return std::nullopt;
  return it->second.begin()->second;
}

std::vector<SliceGpu> DeviceGpuIndex::GpusOfNode(absl::string_view node) const {
  std::vector<SliceGpu> gpus;
  auto it = node_gpus_.find(node);
  if (it == node_gpus_.end()) return gpus;
  std::set<int> seen;
  for (const auto& [slice, of_slice] : it->second) {
    for (const SliceGpu& gpu : of_slice) {
      if (seen.insert(gpu.index).second) gpus.push_back(gpu);
    }
  }
  std::sort(gpus.begin(), gpus.end(), [](const SliceGpu& a, const SliceGpu& b) { return a.index < b.index; });
  return gpus;
}

std::optional<ClaimGpus> GpusOfClaim(const kube::ResourceClaim& claim, const DeviceGpuIndex& index) {
  if (!claim.allocated) return std::nullopt;
  ClaimGpus held;
  held.node = claim.node_name;
  for (const kube::AllocatedDevice& device : claim.devices) {
    // Admin access watches a device without taking it from its users.
    if (device.driver != index.driver() || device.admin_access) continue;
    const std::optional<DeviceGpu> gpu = index.Find(device.driver, device.pool, device.device);
    if (!gpu) {
      ++held.unresolved;
      continue;
    }
    if (held.node.empty()) held.node = gpu->node;
    if (gpu->node != held.node) return std::nullopt;  // not node-local: no node's GPUs to take
    held.indices.push_back(gpu->index);
  }
  std::sort(held.indices.begin(), held.indices.end());
  held.indices.erase(std::unique(held.indices.begin(), held.indices.end()), held.indices.end());
  if (held.gpus() == 0 || held.node.empty()) return std::nullopt;
  return held;
}

}  // namespace topofit::decision
