// What the node agent reads from the kubelet and from nvidia-smi (agent/): the device plugin's
// GetPreferredAllocation and Allocate requests, the pod-resources List reply, and the --query-gpu CSV, on
// a DGX A100 node (tests/data/nvidia-smi). The same bytes are tried as each.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "agent/device_plugin_wire.h"
#include "agent/device_table.h"
#include "agent/gpu_discovery.h"
#include "agent/gpu_ids_correction.h"
#include "agent/pod_choice.h"
#include "proto/deviceplugin_v1beta1.pb.h"
#include "proto/podresources_v1.pb.h"

namespace {

using topofit::agent::DeviceSnapshot;

std::string ReadData(const std::string& name) {
  std::ifstream file(std::string(TOPOFIT_TEST_DATA_DIR) + "/nvidia-smi/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

const DeviceSnapshot& Node() {
  static const DeviceSnapshot* const node = [] {
    absl::StatusOr<topofit::agent::NodeGpus> gpus =
        topofit::agent::BuildNodeGpus(ReadData("dgx-a100-query.csv"), ReadData("dgx-a100.txt"));
    if (!gpus.ok()) std::abort();  // the harness's own data
    topofit::agent::DeviceTable table;
    table.SetDiscovered(*gpus);
    return new DeviceSnapshot(table.Snapshot());
  }();
  return *node;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const DeviceSnapshot& node = Node();
  const int length = static_cast<int>(size);
  // A pod waiting for the first two GPUs, as the extender chose them.
  std::vector<topofit::agent::ChosenPod> waiting(1);
  waiting[0].key = "ml/trainer";
  waiting[0].uid = "uid-trainer";
  waiting[0].chosen = topofit::topology::GpuSet::FromMask(0b11);

  v1beta1::PreferredAllocationRequest preferred;
  if (preferred.ParseFromArray(data, length)) {
    for (const v1beta1::ContainerPreferredAllocationRequest& container : preferred.container_requests()) {
      (void)topofit::agent::PreferDevices(node, waiting, topofit::agent::ContainerRequestOf(container));
    }
  }
  v1beta1::AllocateRequest allocate;
  if (allocate.ParseFromArray(data, length)) {
    for (const v1beta1::ContainerAllocateRequest& container : allocate.container_requests()) {
      absl::StatusOr<topofit::topology::GpuSet> gpus = topofit::agent::GpusOf(
          node, {container.devices_ids().begin(), container.devices_ids().end()}, "devices_ids");
      if (gpus.ok()) (void)topofit::agent::PodForAllocation(waiting, *gpus);
    }
  }
  v1::ListPodResourcesResponse list;
  if (list.ParseFromArray(data, length)) {
    int skipped = 0;
    const auto find = [](const std::string& namespace_name, const std::string& name) {
      topofit::kube::Pod pod;
      pod.metadata.namespace_name = namespace_name;
      pod.metadata.name = name;
      return std::optional<topofit::kube::Pod>(pod);
    };
    (void)topofit::agent::CorrectionsFor(topofit::agent::HeldByPods(list, "nvidia.com/gpu"), node, find, &skipped);
  }
  (void)topofit::agent::ParseGpuQuery(absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
