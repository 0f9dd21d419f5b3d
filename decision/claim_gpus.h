#pragma once

// Which GPUs Dynamic Resource Allocation has handed out (issue 37): a pod whose GPUs come from a
// ResourceClaim requests no `nvidia.com/gpu`, so without this its GPUs look free and the extender would give
// them to a device-plugin pod. The claim names devices (driver, pool, device); the ResourceSlices say which
// node each device is on and which GPU it is: NVIDIA's DRA driver gives every GPU device an `index`
// attribute (the GPU's index on its node, as the device plugin and topofit count them) and a `uuid`; a MIG
// device names its parent GPU by `parentUUID` and takes that GPU from whole-GPU pods.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "kube/dra_objects.h"

namespace topofit::decision {

// NVIDIA's DRA driver for GPUs.
inline constexpr char kNvidiaGpuDriver[] = "gpu.nvidia.com";

// A whole GPU of a node as its ResourceSlice publishes it.
struct SliceGpu {
  int index = 0;  // its index on the node: the `index` attribute
  kube::SliceDevice device;
};

struct DeviceGpu {
  std::string node;
  int index = 0;
  bool operator==(const DeviceGpu&) const = default;
};

// The GPU each device of the known ResourceSlices of a driver stands for. Find is called for every device
// of every claim on every slice event, so it is a hash lookup, not a walk over the slices.
class DeviceGpuIndex {
 public:
  explicit DeviceGpuIndex(std::string driver = kNvidiaGpuDriver) : driver_(std::move(driver)) {}

  // Learns a slice, replacing what the slice of that name said before; slices of other drivers and of no
  // single node are ignored. Both return the pools whose devices may have changed (the slice's pool before
  // and after): only claims on those pools can resolve differently.
  std::set<std::string> Upsert(const kube::ResourceSlice& slice);
  std::set<std::string> Remove(absl::string_view slice_name);
  void Clear();

  const std::string& driver() const { return driver_; }
  // nullopt when no known slice has the device, or it is not a GPU nor a part of one.
  std::optional<DeviceGpu> Find(absl::string_view driver, absl::string_view pool, absl::string_view device) const;
  // The node's whole GPUs as its slices publish them, by index (a GPU two slices list: the first by slice
  // name); empty when no slice of the node is known.
  std::vector<SliceGpu> GpusOfNode(absl::string_view node) const;

 private:
  struct Slice {
    std::string pool;
    std::string node;
    std::vector<std::string> devices;  // the names of the devices it identifies
  };
  // What the slices say of one (pool, device), by slice name: two slices of a pool may name the same device
  // while the driver republishes the pool, and the first by name is the one that counts.
  using SlicesOfDevice = std::map<std::string, DeviceGpu, std::less<>>;

  // Forgets what the slice of that name identified; its pool, or nullopt when it was not known.
  std::optional<std::string> Drop(absl::string_view slice_name);

  std::string driver_;
  std::map<std::string, Slice, std::less<>> slices_;  // by slice name
  absl::flat_hash_map<std::pair<std::string, std::string>, SlicesOfDevice> devices_;  // by (pool, device name)
  // Each node's whole GPUs, by slice name.
  std::map<std::string, std::map<std::string, std::vector<SliceGpu>, std::less<>>, std::less<>> node_gpus_;
};

// The GPUs an allocated claim holds on one node.
struct ClaimGpus {
  std::string node;
  std::vector<int> indices;  // the GPUs the slices identify, ascending, each once
  // Devices of the driver no known slice identifies yet (its slice not seen, or changed): counted, so that
  // the node's GPUs are not handed out meanwhile, but not placed.
  int unresolved = 0;
  int gpus() const { return static_cast<int>(indices.size()) + unresolved; }
};

// nullopt when the claim holds no GPU of the index's driver (not allocated, other drivers only, admin access
// only) or its devices are on no one node.
std::optional<ClaimGpus> GpusOfClaim(const kube::ResourceClaim& claim, const DeviceGpuIndex& index);

}  // namespace topofit::decision
