#pragma once

// Dynamic Resource Allocation (resource.k8s.io, GA in Kubernetes 1.34), reduced to what tells which GPUs
// are taken: a ResourceSlice lists a pool's devices and their attributes (NVIDIA's driver `gpu.nvidia.com`
// publishes one pool per node, each GPU a device with `index`, `uuid`, `productName`, `pcieRoot`...), and a
// ResourceClaim, once allocated, names the devices it holds and the pods it is reserved for. codec/dra_json.h
// decodes them from v1, v1beta2 and v1beta1.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kube/objects.h"

namespace topofit::kube {

// One typed value of a device attribute: exactly one is set (the API's DeviceAttribute).
struct DeviceAttribute {
  std::optional<int64_t> int_value;
  std::optional<bool> bool_value;
  std::optional<std::string> string_value;
  std::optional<std::string> version_value;
  bool operator==(const DeviceAttribute&) const = default;
};

struct SliceDevice {
  std::string name;
  // By the name the slice gives it: unqualified ("index", in the driver's own domain) or qualified
  // ("resource.kubernetes.io/pcieRoot").
  std::map<std::string, DeviceAttribute, std::less<>> attributes;
  bool operator==(const SliceDevice&) const = default;
};

struct ResourceSlice {
  ObjectMeta metadata;
  std::string driver;
  std::string pool;
  int64_t pool_generation = 0;
  std::string node_name;  // empty for slices of devices not local to one node
  std::vector<SliceDevice> devices;
  bool operator==(const ResourceSlice&) const = default;
};

// status.allocation.devices.results[]: one device a claim holds.
struct AllocatedDevice {
  std::string request;
  std::string driver;
  std::string pool;
  std::string device;
  bool admin_access = false;  // monitoring access: it does not take the device from others
  bool operator==(const AllocatedDevice&) const = default;
};

// status.reservedFor[]: who may use the claim (pods, as kube-scheduler reserves it).
struct ClaimConsumer {
  std::string resource;  // "pods"
  std::string name;
  std::string uid;
  bool operator==(const ClaimConsumer&) const = default;
};

// spec.devices.requests[]: what a claim asks for, in v1's `exactly` (ExactDeviceRequest) or v1beta1's flat
// fields, which carry the same names.
struct DeviceRequest {
  std::string name;
  std::string device_class_name;
  std::string allocation_mode;   // "ExactCount" (the default when empty), "All", or one a newer API adds
  std::optional<int64_t> count;  // ExactCount's number of devices; 1 when unset
  std::vector<std::string> selectors;  // selectors[].cel.expression, each of which a device must meet
  bool admin_access = false;
  // Alternatives (firstAvailable), or a selector of a kind other than CEL: a request topofit cannot judge.
  bool first_available = false;
  bool other_selector = false;
  bool operator==(const DeviceRequest&) const = default;
};

// spec.devices.constraints[]: the devices of `requests` (all of the claim's when empty) share the value of
// `match_attribute`, a qualified attribute name such as "resource.kubernetes.io/pcieRoot".
struct DeviceConstraint {
  std::vector<std::string> requests;
  std::optional<std::string> match_attribute;
  bool other = false;  // a kind of constraint other than matchAttribute (distinctAttribute...)
  bool operator==(const DeviceConstraint&) const = default;
};

struct ResourceClaim {
  ObjectMeta metadata;
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  bool allocated = false;  // status.allocation is set
  std::vector<AllocatedDevice> devices;
  // The node the allocation is bound to: the value of the allocation's node selector term
  // `metadata.name In [node]`, as kube-scheduler writes it for node-local devices; empty otherwise.
  std::string node_name;
  std::vector<ClaimConsumer> reserved_for;
  bool operator==(const ResourceClaim&) const = default;
};

}  // namespace topofit::kube
