#include "agent/device_plugin_wire.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace topofit::agent {
namespace {

constexpr char kVisibleDevicesEnv[] = "NVIDIA_VISIBLE_DEVICES";
constexpr char kCdiKind[] = "nvidia.com/gpu";
constexpr char kCdiAnnotationPrefix[] = "cdi.k8s.io/topofit-gpu_";

std::string CdiName(absl::string_view device_id) { return absl::StrCat(kCdiKind, "=", device_id); }

}  // namespace

absl::StatusOr<DeviceListStrategies> ParseDeviceListStrategies(absl::string_view text) {
  DeviceListStrategies strategies;
  for (absl::string_view name : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    name = absl::StripAsciiWhitespace(name);
    if (name == "envvar") {
      strategies.envvar = true;
    } else if (name == "cdi-cri") {
      strategies.cdi_cri = true;
    } else if (name == "cdi-annotations") {
      strategies.cdi_annotations = true;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown device list strategy \"", name, "\"; expected envvar, cdi-cri or cdi-annotations"));
    }
  }
  if (!strategies.envvar && !strategies.cdi_cri && !strategies.cdi_annotations) {
    return absl::InvalidArgumentError("no device list strategy; expected envvar, cdi-cri or cdi-annotations");
  }
  return strategies;
}

v1beta1::DevicePluginOptions PluginOptions() {
  v1beta1::DevicePluginOptions options;
  options.set_get_preferred_allocation_available(true);
  return options;
}

v1beta1::RegisterRequest RegisterRequestFor(const std::string& endpoint, const std::string& resource_name) {
  v1beta1::RegisterRequest request;
  request.set_version(kDevicePluginVersion);
  request.set_endpoint(endpoint);
  request.set_resource_name(resource_name);
  *request.mutable_options() = PluginOptions();
  return request;
}

v1beta1::ListAndWatchResponse ListAndWatchResponseOf(const DeviceSnapshot& devices) {
  v1beta1::ListAndWatchResponse response;
  for (const DeviceInfo& info : devices.devices) {
    v1beta1::Device* device = response.add_devices();
    device->set_id(info.id);
    device->set_health(info.healthy ? kHealthy : kUnhealthy);
    if (info.numa_node >= 0) device->mutable_topology()->add_nodes()->set_id(info.numa_node);
  }
  return response;
}

ContainerRequest ContainerRequestOf(const v1beta1::ContainerPreferredAllocationRequest& request) {
  return ContainerRequest{{request.available_deviceids().begin(), request.available_deviceids().end()},
                          {request.must_include_deviceids().begin(), request.must_include_deviceids().end()},
                          request.allocation_size()};
}

v1beta1::ContainerAllocateResponse ContainerAllocateResponseFor(const DeviceListStrategies& strategies,
                                                                const std::vector<std::string>& device_ids,
                                                                int index) {
  v1beta1::ContainerAllocateResponse response;
  if (strategies.envvar) (*response.mutable_envs())[kVisibleDevicesEnv] = absl::StrJoin(device_ids, ",");
  if (strategies.cdi_annotations) {
    std::vector<std::string> names;
    for (const std::string& id : device_ids) names.push_back(CdiName(id));
    (*response.mutable_annotations())[absl::StrCat(kCdiAnnotationPrefix, index)] = absl::StrJoin(names, ",");
  }
  if (strategies.cdi_cri) {
    for (const std::string& id : device_ids) response.add_cdi_devices()->set_name(CdiName(id));
  }
  return response;
}

}  // namespace topofit::agent
