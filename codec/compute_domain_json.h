#pragma once

// NVIDIA's ComputeDomain (kube/compute_domain.h) as the API server writes it in JSON, resource.nvidia.com
// v1beta1 (spec.numNodes) or v1beta2 (the count in an annotation). Go's decoding rules, as codec/kube_json.h:
// unknown fields skipped, null as absent, a read field of the wrong type an InvalidArgument naming its path.

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "kube/compute_domain.h"

namespace topofit::codec {

absl::StatusOr<kube::ComputeDomain> ComputeDomainFromJson(const nlohmann::json& json);

}  // namespace topofit::codec
