#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "kube/container_status.h"

namespace topofit::codec {

// status.initContainerStatuses then status.containerStatuses of a core/v1 Pod in the API's JSON, decoded
// by the rules of kube_json.h (unknown fields skipped, null as absent, a wrong type an InvalidArgument
// naming its path). Kept apart from PodFromJson: only the restart collector reads them.
absl::StatusOr<std::vector<kube::ContainerStatus>> ContainerStatusesFromJson(const nlohmann::json& pod);

}  // namespace topofit::codec
