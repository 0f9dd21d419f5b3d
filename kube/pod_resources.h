#pragma once

#include <cstdint>

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

// The pod's effective nvidia.com/gpu request in whole GPUs. InvalidArgument when a container, init
// container or the overhead asks for a fractional or negative number of GPUs (the API server rejects
// those, so such a pod did not come from it), or for more than INT_MAX.
absl::StatusOr<int> GpuRequest(const Pod& pod);

// The ResourceClaim that holds the pod's nvidia.com/gpu when DRA serves that extended resource on the pod's
// node (status.extendedResourceClaimStatus maps it: KEP-5004, a DeviceClass with that extendedResourceName and
// no device plugin advertising it there). Empty when the device plugin serves them, or nothing says yet.
std::string GpuExtendedResourceClaim(const Pod& pod);

}  // namespace topofit::kube
