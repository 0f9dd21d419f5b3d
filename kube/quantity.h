#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace topofit::kube {

// Kubernetes resource.Quantity text ("500m", "2", "1.5Gi", "1e3", "-0.5") as an integer number of
// thousandths of the unit: "500m" -> 500, "2" -> 2000, "1Ki" -> 1024000.
//
// Grammar (k8s.io/apimachinery/pkg/api/resource/quantity.go):
//   [+-] (digits [. digits*] | . digits) [suffix]
//   suffix: n u m "" k M G T P E | Ki Mi Gi Ti Pi Ei | (e|E) [+-] digits
// Values finer than a thousandth round away from zero, as Quantity.MilliValue() does for the
// canonical (int64) representation: "1n" -> 1.
// Errors: InvalidArgument for text that is not a quantity; OutOfRange when the milli-value does not fit
// in int64 (upstream silently wraps there).
absl::StatusOr<int64_t> ParseQuantityMilli(absl::string_view text);

// A whole count, for extended resources such as nvidia.com/gpu that Kubernetes only allows as integers:
// "2" -> 2, "2k" -> 2000; "1.5" or "500m" -> InvalidArgument.
absl::StatusOr<int64_t> ParseQuantityCount(absl::string_view text);

// The same check on an already parsed milli-value: 2000 -> 2, 1500 -> InvalidArgument.
absl::StatusOr<int64_t> MilliToCount(int64_t milli);

}  // namespace topofit::kube
