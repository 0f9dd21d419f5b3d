#include "decision/claim_gpus.h"

#include <algorithm>

#include <catch2/catch.hpp>

namespace topofit::decision {
namespace {

kube::DeviceAttribute Int(int64_t value) {
  kube::DeviceAttribute attribute;
  attribute.int_value = value;
  return attribute;
}
kube::DeviceAttribute String(std::string value) {
  kube::DeviceAttribute attribute;
  attribute.string_value = std::move(value);
  return attribute;
}

// A node's slice as NVIDIA's driver publishes it: gpu-<i> with index i and uuid GPU-<node>-<i>.
kube::ResourceSlice NodeSlice(const std::string& node, int gpus, const std::string& driver = kNvidiaGpuDriver) {
  kube::ResourceSlice slice;
  slice.metadata.name = node + "-gpu.nvidia.com";
  slice.driver = driver;
  slice.pool = node;
  slice.node_name = node;
  for (int i = 0; i < gpus; ++i) {
    kube::SliceDevice device;
    device.name = "gpu-" + std::to_string(i);
    device.attributes["type"] = String("gpu");
    device.attributes["index"] = Int(i);
    device.attributes["uuid"] = String("GPU-" + node + "-" + std::to_string(i));
    slice.devices.push_back(device);
  }
  return slice;
}

// A MIG device of the GPU whose uuid is `parent`.
kube::SliceDevice Mig(const std::string& name, const std::string& parent) {
  kube::SliceDevice mig;
  mig.name = name;
  mig.attributes["type"] = String("mig");
  mig.attributes["parentUUID"] = String(parent);
  return mig;
}

kube::ResourceClaim Claim(const std::string& pool, std::vector<std::string> devices, const std::string& node = "") {
  kube::ResourceClaim claim;
  claim.metadata.uid = "claim-uid";
  claim.allocated = true;
  claim.node_name = node;
  for (const std::string& device : devices) {
    claim.devices.push_back({.request = "gpus", .driver = kNvidiaGpuDriver, .pool = pool, .device = device, .admin_access = false});
  }
  return claim;
}

TEST_CASE("A claim's devices are the GPUs their slice's index attributes name, on the slice's node", "[claim_gpus]") {
  DeviceGpuIndex index;
  index.Upsert(NodeSlice("node-a", 8));
  const std::optional<ClaimGpus> held = GpusOfClaim(Claim("node-a", {"gpu-5", "gpu-2"}), index);
  REQUIRE(held);
  CHECK(held->node == "node-a");
  CHECK(held->indices == std::vector<int>{2, 5});
  CHECK(held->unresolved == 0);
  CHECK(held->gpus() == 2);
}

TEST_CASE("A MIG device takes its parent GPU, named by uuid", "[claim_gpus]") {
  kube::ResourceSlice slice = NodeSlice("node-a", 8);
  slice.devices.push_back(Mig("gpu-7-mig-1g10gb-0", "GPU-node-a-7"));
  DeviceGpuIndex index;
  index.Upsert(slice);
  // Two parts of one GPU hold it once.
  const std::optional<ClaimGpus> held = GpusOfClaim(Claim("node-a", {"gpu-7-mig-1g10gb-0", "gpu-7"}), index);
  REQUIRE(held);
  CHECK(held->indices == std::vector<int>{7});
}

TEST_CASE("Devices no known slice identifies are counted, not placed, until their slice arrives", "[claim_gpus]") {
  DeviceGpuIndex index;
  const kube::ResourceClaim claim = Claim("node-b", {"gpu-0", "gpu-1"}, "node-b");
  std::optional<ClaimGpus> held = GpusOfClaim(claim, index);
  REQUIRE(held);
  CHECK(held->node == "node-b");
  CHECK(held->indices.empty());
  CHECK(held->unresolved == 2);
  // Without the allocation's node either, there is no node to take GPUs from.
  CHECK_FALSE(GpusOfClaim(Claim("node-b", {"gpu-0"}), index));

  index.Upsert(NodeSlice("node-b", 4));
  held = GpusOfClaim(claim, index);
  REQUIRE(held);
  CHECK(held->indices == std::vector<int>{0, 1});
  CHECK(held->unresolved == 0);
  index.Remove("node-b-gpu.nvidia.com");
  CHECK(GpusOfClaim(claim, index)->unresolved == 2);
}

TEST_CASE("What holds no GPU: unallocated claims, other drivers, admin access, devices on several nodes", "[claim_gpus]") {
  DeviceGpuIndex index;
  index.Upsert(NodeSlice("node-a", 8));
  index.Upsert(NodeSlice("node-c", 8));
  index.Upsert(NodeSlice("nic-node", 2, "sriov.example.com"));

  kube::ResourceClaim claim = Claim("node-a", {"gpu-0"});
  claim.allocated = false;
  CHECK_FALSE(GpusOfClaim(claim, index));

  claim = Claim("nic-node", {"gpu-0"});
  claim.devices[0].driver = "sriov.example.com";
  CHECK_FALSE(GpusOfClaim(claim, index));

  claim = Claim("node-a", {"gpu-0", "gpu-1"});
  claim.devices[1].admin_access = true;
  CHECK(GpusOfClaim(claim, index)->indices == std::vector<int>{0});
  claim.devices[0].admin_access = true;
  CHECK_FALSE(GpusOfClaim(claim, index));

  claim = Claim("node-a", {"gpu-0"});
  claim.devices.push_back({.request = "gpus", .driver = kNvidiaGpuDriver, .pool = "node-c", .device = "gpu-0", .admin_access = false});
  CHECK_FALSE(GpusOfClaim(claim, index));
}

TEST_CASE("A slice replaced under its name forgets the devices it no longer lists", "[claim_gpus]") {
  DeviceGpuIndex index;
  index.Upsert(NodeSlice("node-a", 8));
  CHECK(index.Find(kNvidiaGpuDriver, "node-a", "gpu-6") == DeviceGpu{"node-a", 6});
  index.Upsert(NodeSlice("node-a", 4));
  CHECK_FALSE(index.Find(kNvidiaGpuDriver, "node-a", "gpu-6"));
  CHECK_FALSE(index.Find("other.example.com", "node-a", "gpu-1"));
}

TEST_CASE("A slice change names the pools whose devices it may have changed, before and after", "[claim_gpus]") {
  DeviceGpuIndex index;
  CHECK(index.Upsert(NodeSlice("node-a", 8)) == std::set<std::string>{"node-a"});
  // The same slice republished under another pool: claims on either pool may resolve differently now.
  kube::ResourceSlice moved = NodeSlice("node-a", 8);
  moved.pool = "node-a-v2";
  CHECK(index.Upsert(moved) == std::set<std::string>{"node-a", "node-a-v2"});
  CHECK_FALSE(index.Find(kNvidiaGpuDriver, "node-a", "gpu-1"));
  CHECK(index.Find(kNvidiaGpuDriver, "node-a-v2", "gpu-1") == DeviceGpu{"node-a", 1});
  CHECK(index.Remove("node-a-gpu.nvidia.com") == std::set<std::string>{"node-a-v2"});
  CHECK(index.Remove("node-a-gpu.nvidia.com").empty());
  // A slice of another driver changes no GPU pool, unless its name held one before.
  CHECK(index.Upsert(NodeSlice("nic-node", 2, "sriov.example.com")).empty());
}

TEST_CASE("Two slices of one pool naming a device: the first by name counts, the other once it is gone", "[claim_gpus]") {
  DeviceGpuIndex index;
  kube::ResourceSlice old_slice = NodeSlice("node-a", 4);
  old_slice.metadata.name = "b-old";
  kube::ResourceSlice new_slice = NodeSlice("node-a", 4);
  new_slice.metadata.name = "a-new";
  new_slice.devices[1].attributes["index"] = Int(3);  // the republished pool says gpu-1 is GPU 3
  index.Upsert(old_slice);
  index.Upsert(new_slice);
  CHECK(index.Find(kNvidiaGpuDriver, "node-a", "gpu-1") == DeviceGpu{"node-a", 3});
  index.Remove("a-new");
  CHECK(index.Find(kNvidiaGpuDriver, "node-a", "gpu-1") == DeviceGpu{"node-a", 1});
}

TEST_CASE("A node's whole GPUs as its slices publish them, by index, with their attributes", "[claim_gpus]") {
  DeviceGpuIndex index;
  kube::ResourceSlice slice = NodeSlice("node-a", 4);
  slice.devices.push_back(Mig("gpu-3-mig-1g10gb-0", "GPU-node-a-3"));
  std::reverse(slice.devices.begin(), slice.devices.end());
  index.Upsert(slice);
  const std::vector<SliceGpu> gpus = index.GpusOfNode("node-a");
  REQUIRE(gpus.size() == 4);  // the MIG device is a part, not a GPU
  for (int i = 0; i < 4; ++i) {
    CHECK(gpus[i].index == i);
    CHECK(gpus[i].device.name == "gpu-" + std::to_string(i));
    CHECK(gpus[i].device.attributes.at("uuid").string_value == "GPU-node-a-" + std::to_string(i));
  }
  CHECK(index.GpusOfNode("node-b").empty());
  index.Remove(slice.metadata.name);
  CHECK(index.GpusOfNode("node-a").empty());
}

}  // namespace
}  // namespace topofit::decision
