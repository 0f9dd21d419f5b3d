#pragma once

// The CEL selectors of a ResourceClaim's device request (selectors[].cel.expression), reduced to the subset
// topofit can judge without a CEL interpreter. An expression is a conjunction, joined by `&&`, of:
//
//   device.driver == "gpu.nvidia.com"
//   device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB"
//   device.attributes["<domain>"].<name> == "<text>"      (any string attribute, e.g. architecture)
//
// with string literals in double or single quotes and no escapes. Anything else (||, !, !=, functions such
// as matches() or compareTo(), capacity, numbers, parentheses) is refused with the reason, so that a claim
// topofit cannot judge is said to be so and never passed as if its selector matched every GPU.
//
// A device matches a term when it has that attribute as a string of that value; a device without the
// attribute does not match (upstream, CEL fails on it and the allocator skips the device).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kube/dra_objects.h"

namespace topofit::decision {

struct DeviceSelector {
  struct AttributeIs {
    std::string domain;  // "gpu.nvidia.com", "resource.kubernetes.io"
    std::string name;    // "productName"
    std::string value;
    bool operator==(const AttributeIs&) const = default;
  };
  std::optional<std::string> driver;  // device.driver == ...
  std::vector<AttributeIs> attributes;
  bool operator==(const DeviceSelector&) const = default;
};

// InvalidArgument naming the part outside the subset.
absl::StatusOr<DeviceSelector> ParseDeviceSelector(absl::string_view expression);

// Whether a device of `driver`'s slice meets the selector.
bool SelectorMatches(const DeviceSelector& selector, absl::string_view driver, const kube::SliceDevice& device);

// The attribute `domain`/`name` of a device of `driver`'s slice: attributes in the driver's own domain may be
// written unqualified. Null when the device has none.
const kube::DeviceAttribute* QualifiedAttribute(const kube::SliceDevice& device, absl::string_view driver,
                                                absl::string_view domain, absl::string_view name);

}  // namespace topofit::decision
