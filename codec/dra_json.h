#pragma once

// ResourceSlices and ResourceClaims (kube/dra_objects.h) as the API server writes them in JSON, in any of
// the versions a cluster may serve: resource.k8s.io/v1 and v1beta2 (a device's attributes on the device),
// and v1beta1 (under the device's `basic`). Go's decoding rules, as codec/kube_json.h: unknown fields
// skipped, null as absent, a read field of the wrong type an InvalidArgument naming its path. Never throws.

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "kube/dra_objects.h"

namespace topofit::codec {

absl::StatusOr<kube::ResourceSlice> ResourceSliceFromJson(const nlohmann::json& json);
absl::StatusOr<kube::ResourceClaim> ResourceClaimFromJson(const nlohmann::json& json);

}  // namespace topofit::codec
