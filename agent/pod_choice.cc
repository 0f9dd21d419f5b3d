#include "agent/pod_choice.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "topology/allocator.h"

namespace topofit::agent {

void SortInBindOrder(std::vector<ChosenPod>& pods) {
  std::sort(pods.begin(), pods.end(), [](const ChosenPod& a, const ChosenPod& b) {
    return std::tie(a.bound_at, a.created_seconds, a.uid) < std::tie(b.bound_at, b.created_seconds, b.uid);
  });
}

absl::StatusOr<topology::GpuSet> GpusOf(const DeviceSnapshot& devices, const std::vector<std::string>& device_ids,
                                        absl::string_view what) {
  topology::GpuSet set;
  for (const std::string& id : device_ids) {
    const std::optional<topology::GpuId> gpu = devices.GpuOf(id);
    if (!gpu) return absl::InvalidArgumentError(absl::StrCat(what, ": device ", id, " is not a GPU of this node"));
    if (set.contains(*gpu)) return absl::InvalidArgumentError(absl::StrCat(what, ": device ", id, " is listed twice"));
    set = set.with(*gpu);
  }
  return set;
}

namespace {

std::vector<std::string> DeviceIdsOf(const DeviceSnapshot& devices, topology::GpuSet gpus) {
  std::vector<std::string> ids;
  for (topology::GpuId gpu : gpus.ids()) ids.push_back(devices.devices[gpu.value].id);
  return ids;
}

}  // namespace

absl::StatusOr<PreferredDevices> PreferDevices(const DeviceSnapshot& devices, const std::vector<ChosenPod>& pods,
                                               const ContainerRequest& request) {
  if (!devices.topology) return absl::FailedPreconditionError("no GPUs discovered yet");
  absl::StatusOr<topology::GpuSet> available = GpusOf(devices, request.available, "available_deviceIDs");
  if (!available.ok()) return available.status();
  absl::StatusOr<topology::GpuSet> must = GpusOf(devices, request.must_include, "must_include_deviceIDs");
  if (!must.ok()) return must.status();
  if (!available->contains(*must)) {
    return absl::InvalidArgumentError("must_include_deviceIDs: a device that is not available");
  }
  const topology::GpuSet usable = *available & devices.Healthy();
  if (request.size <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("allocation_size ", request.size, ": must be positive"));
  }
  if (request.size > usable.size()) {
    return absl::InvalidArgumentError(absl::StrCat("allocation_size ", request.size, ": only ", usable.size(),
                                                   " healthy devices are available"));
  }
  if (must->size() > request.size) {
    return absl::InvalidArgumentError(absl::StrCat(must->size(), " must-include devices for allocation_size ",
                                                   request.size));
  }
  for (const ChosenPod& pod : pods) {
    if (pod.chosen.size() == request.size && usable.contains(pod.chosen) && pod.chosen.contains(*must)) {
      return PreferredDevices{DeviceIdsOf(devices, pod.chosen), &pod};
    }
  }
  topology::AllocationRequest best;
  best.gpus = request.size;
  best.required = *must;
  absl::StatusOr<topology::Allocation> allocation = topology::Allocate(*devices.topology, usable, best);
  if (!allocation.ok()) return allocation.status();
  return PreferredDevices{DeviceIdsOf(devices, allocation->gpus), nullptr};
}

const ChosenPod* PodForAllocation(const std::vector<ChosenPod>& pods, topology::GpuSet given) {
  for (const ChosenPod& pod : pods) {
    if (pod.chosen == given) return &pod;
  }
  for (const ChosenPod& pod : pods) {
    if (pod.chosen.size() == given.size()) return &pod;
  }
  return nullptr;
}

}  // namespace topofit::agent
