#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kube/objects.h"

namespace topofit::kube {

// What the scheduler reserves on a node for `pod`, in thousandths of `resource`'s unit: upstream's
// PodRequests (k8s.io/component-helpers/resource/helpers.go) with default options, for one resource.
//
//   container(c)  = c.requests[r], else c.limits[r] (the API server defaults requests to limits)
//   regular       = sum of containers + sum of sidecars (init containers with restartPolicy Always)
//   init(i)       = container(i) + sidecars declared before i         (KEP-753; for a sidecar,
//                   the sidecars up to and including it)
//   effective     = max(regular, max over init containers of init(i)) + overhead[r]
//
// Pod-level resources (KEP-2837) replace the container aggregate for cpu, memory and hugepages-* only;
// upstream ignores them for every other resource, so nvidia.com/gpu always comes from the containers.
// Sums saturate at INT64_MAX rather than wrap.
int64_t EffectiveRequestMilli(const Pod& pod, absl::string_view resource);

// The pod's effective request of `resource`, an extended resource counting GPUs, in whole GPUs.
// InvalidArgument when a container, init container or the overhead asks for a fractional or negative
// number (the API server rejects those for extended resources, so such a pod did not come from it), or for
// more than INT_MAX.
absl::StatusOr<int> WholeGpusRequested(const Pod& pod, absl::string_view resource);
// WholeGpusRequested of nvidia.com/gpu.
absl::StatusOr<int> GpuRequest(const Pod& pod);

// The ResourceClaim that holds the pod's `resource` when DRA serves that extended resource
// (status.extendedResourceClaimStatus maps it: KEP-5004, written when kube-scheduler allocated the claim it
// made for the pod). Empty when nothing maps it: the device plugin serves it, or the pod is not scheduled yet.
std::string ExtendedResourceClaim(const Pod& pod, absl::string_view resource);
// ExtendedResourceClaim of nvidia.com/gpu: on a node where no device plugin advertises it and a DeviceClass
// names it its extendedResourceName.
std::string GpuExtendedResourceClaim(const Pod& pod);

// Every DeviceClass is also an extended resource by its own name, whatever its extendedResourceName
// (KEP-5004): a pod asking `deviceclass.resource.kubernetes.io/gpu.nvidia.com: 2` gets a claim for two
// devices of class gpu.nvidia.com, made and allocated by kube-scheduler, which no device plugin can serve.
inline constexpr absl::string_view kDeviceClassResourcePrefix = "deviceclass.resource.kubernetes.io/";
std::string DeviceClassResourceName(absl::string_view device_class);

}  // namespace topofit::kube
