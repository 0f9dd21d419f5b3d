#pragma once

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "kube/objects.h"

namespace topofit::codec {

// A core/v1 Pod / Node as the API server and kube-scheduler write it in JSON (e.g. ExtenderArgs.Pod and
// ExtenderArgs.Nodes.items[i]), reduced to kube/objects.h.
//
// Tolerant where Go's decoder is: unknown fields are skipped, and `null` (Go's nil) reads as absent.
// Strict on fields that are read: a wrong JSON type, a quantity that does not parse, or a timestamp that
// is not RFC 3339 is an InvalidArgument naming its path, e.g.
//   spec.containers[1].resources.requests["nvidia.com/gpu"]: not a quantity: ...
// Unknown enumeration strings (operators, effects, restart policies) are not errors: they decode to
// kUnknown. Never throws.
absl::StatusOr<kube::Pod> PodFromJson(const nlohmann::json& json);
absl::StatusOr<kube::Node> NodeFromJson(const nlohmann::json& json);

// A node group's template in the API's Node shape, holding what decisions read of it, which NodeFromJson
// reads back alike: metadata.name, labels and annotations, spec.taints and status.capacity and
// allocatable (quantities in canonical form: "8", "500m"). For the ledger's ConfigMap of templates.
nlohmann::json NodeTemplateToJson(const kube::Node& node);

}  // namespace topofit::codec
