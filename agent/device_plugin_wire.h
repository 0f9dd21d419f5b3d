#pragma once

// The agent's side of the kubelet's device-plugin wire (proto/deviceplugin_v1beta1.proto): the messages it
// sends, built from its own types, and the requests it reads. Kept apart from the gRPC service so the
// contract tests can compare what the agent sends with the upstream encoding field for field.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/device_table.h"
#include "agent/pod_choice.h"
#include "proto/deviceplugin_v1beta1.pb.h"

namespace topofit::agent {

inline constexpr char kDevicePluginVersion[] = "v1beta1";
inline constexpr char kHealthy[] = "Healthy";
inline constexpr char kUnhealthy[] = "Unhealthy";

// How Allocate tells the container runtime which GPUs the container gets, as NVIDIA's device plugin does
// (--device-list-strategy, one or more):
//   envvar           NVIDIA_VISIBLE_DEVICES=<uuid>,<uuid>     (the NVIDIA container runtime reads it)
//   cdi-cri          cdi_devices nvidia.com/gpu=<uuid>         (CRI field, containerd >= 1.7, CRI-O)
//   cdi-annotations  annotation cdi.k8s.io/topofit-gpu_<i> = nvidia.com/gpu=<uuid>,...  (older runtimes)
struct DeviceListStrategies {
  bool envvar = false;
  bool cdi_cri = false;
  bool cdi_annotations = false;
};
// "envvar", "cdi-cri,cdi-annotations", ...; InvalidArgument naming an unknown one, or none.
absl::StatusOr<DeviceListStrategies> ParseDeviceListStrategies(absl::string_view text);

v1beta1::RegisterRequest RegisterRequestFor(const std::string& endpoint, const std::string& resource_name);
v1beta1::DevicePluginOptions PluginOptions();
// Every device with its health and, when known, its NUMA node.
v1beta1::ListAndWatchResponse ListAndWatchResponseOf(const DeviceSnapshot& devices);
ContainerRequest ContainerRequestOf(const v1beta1::ContainerPreferredAllocationRequest& request);
// The reply for container `index` of an AllocateRequest, given `device_ids`.
v1beta1::ContainerAllocateResponse ContainerAllocateResponseFor(const DeviceListStrategies& strategies,
                                                                const std::vector<std::string>& device_ids,
                                                                int index);

}  // namespace topofit::agent
