#include "codec/dra_json.h"

#include <limits>
#include <string>

#include "codec/decode_path.h"
#include "codec/json_read.h"

namespace topofit::codec {
namespace {

using namespace json_read;  // the readers every Kubernetes decoder shares

// A DeviceAttribute: exactly one of int, bool, string and version.
absl::Status ReadAttribute(const Json& json, const std::string& path, kube::DeviceAttribute* out) {
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadInt(json, "int", path, std::numeric_limits<int64_t>::min(),
                                  std::numeric_limits<int64_t>::max(), &out->int_value));
  if (Member(json, "bool") != nullptr) {
    bool value = false;
    TOPOFIT_RETURN_IF_ERROR(ReadBool(json, "bool", path, &value));
    out->bool_value = value;
  }
  for (auto [key, field] : {std::pair{"string", &out->string_value}, std::pair{"version", &out->version_value}}) {
    if (Member(json, key) == nullptr) continue;
    TOPOFIT_RETURN_IF_ERROR(ReadString(json, key, path, &field->emplace()));
  }
  const int set = out->int_value.has_value() + out->bool_value.has_value() + out->string_value.has_value() +
                  out->version_value.has_value();
  if (set != 1) return PathError(path, "must set exactly one of int, bool, string and version");
  return absl::OkStatus();
}

absl::Status ReadAttributes(const Json& parent, const std::string& path, kube::SliceDevice* out) {
  return ReadObject(parent, "attributes", path, [&](const Json& object, const std::string& map_path) {
    for (const auto& [name, value] : object.items()) {
      TOPOFIT_RETURN_IF_ERROR(ReadAttribute(value, MapKey(map_path, name), &out->attributes[name]));
    }
    return absl::OkStatus();
  });
}

absl::Status ReadSliceDevice(const Json& json, const std::string& path, kube::SliceDevice* out) {
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "name", path, &out->name));
  TOPOFIT_RETURN_IF_ERROR(ReadAttributes(json, path, out));
  // v1beta1 keeps them under `basic`.
  return ReadObject(json, "basic", path, [&](const Json& basic, const std::string& basic_path) {
    return ReadAttributes(basic, basic_path, out);
  });
}

absl::Status ReadAllocatedDevice(const Json& json, const std::string& path, kube::AllocatedDevice* out) {
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "request", path, &out->request));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "driver", path, &out->driver));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "pool", path, &out->pool));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "device", path, &out->device));
  return ReadBool(json, "adminAccess", path, &out->admin_access);
}

absl::Status ReadConsumer(const Json& json, const std::string& path, kube::ClaimConsumer* out) {
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "resource", path, &out->resource));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "name", path, &out->name));
  return ReadString(json, "uid", path, &out->uid);
}

// The fields ExactDeviceRequest (v1, v1beta2) and v1beta1's DeviceRequest share.
absl::Status ReadExactRequest(const Json& json, const std::string& path, kube::DeviceRequest* out) {
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "deviceClassName", path, &out->device_class_name));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "allocationMode", path, &out->allocation_mode));
  TOPOFIT_RETURN_IF_ERROR(ReadInt(json, "count", path, std::numeric_limits<int64_t>::min(),
                                  std::numeric_limits<int64_t>::max(), &out->count));
  TOPOFIT_RETURN_IF_ERROR(ReadBool(json, "adminAccess", path, &out->admin_access));
  return ReadArray(json, "selectors", path, &out->selectors,
                   [out](const Json& selector, const std::string& selector_path, std::string* expression) {
                     TOPOFIT_RETURN_IF_ERROR(ExpectObject(selector, selector_path));
                     if (Member(selector, "cel") == nullptr) {
                       out->other_selector = true;
                       return absl::OkStatus();
                     }
                     return ReadObject(selector, "cel", selector_path, [&](const Json& cel, const std::string& cel_path) {
                       return ReadString(cel, "expression", cel_path, expression);
                     });
                   });
}

absl::Status ReadDeviceRequest(const Json& json, const std::string& path, kube::DeviceRequest* out) {
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "name", path, &out->name));
  out->first_available = Member(json, "firstAvailable") != nullptr;
  TOPOFIT_RETURN_IF_ERROR(ReadExactRequest(json, path, out));  // v1beta1
  return ReadObject(json, "exactly", path, [&](const Json& exactly, const std::string& exactly_path) {
    return ReadExactRequest(exactly, exactly_path, out);
  });
}

absl::Status ReadDeviceConstraint(const Json& json, const std::string& path, kube::DeviceConstraint* out) {
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadStrings(json, "requests", path, &out->requests));
  TOPOFIT_RETURN_IF_ERROR(ReadOptionalString(json, "matchAttribute", path, &out->match_attribute));
  out->other = !out->match_attribute.has_value();
  return absl::OkStatus();
}

// The node of `metadata.name In [node]` in the allocation's node selector (kube-scheduler's form for
// node-local devices); other selectors leave it empty.
absl::Status ReadAllocatedNode(const Json& allocation, const std::string& path, std::string* node) {
  return ReadObject(allocation, "nodeSelector", path, [&](const Json& selector, const std::string& selector_path) {
    std::vector<kube::NodeSelectorTerm> terms;
    TOPOFIT_RETURN_IF_ERROR(ReadArray(selector, "nodeSelectorTerms", selector_path, &terms,
                                      [](const Json& term, const std::string& term_path, kube::NodeSelectorTerm* out) {
                                        TOPOFIT_RETURN_IF_ERROR(ExpectObject(term, term_path));
                                        return ReadArray(term, "matchFields", term_path, &out->match_fields,
                                                         [](const Json& field, const std::string& field_path,
                                                            kube::NodeSelectorRequirement* requirement) {
                                                           TOPOFIT_RETURN_IF_ERROR(ExpectObject(field, field_path));
                                                           TOPOFIT_RETURN_IF_ERROR(
                                                               ReadString(field, "key", field_path, &requirement->key));
                                                           return ReadStrings(field, "values", field_path,
                                                                              &requirement->values);
                                                         });
                                      }));
    if (terms.size() == 1 && terms[0].match_fields.size() == 1 && terms[0].match_fields[0].key == "metadata.name" &&
        terms[0].match_fields[0].values.size() == 1) {
      *node = terms[0].match_fields[0].values[0];
    }
    return absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<kube::ResourceSlice> ResourceSliceFromJson(const nlohmann::json& json) {
  kube::ResourceSlice slice;
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, ""));
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "metadata", "", [&](const Json& meta, const std::string& path) {
    return ReadObjectMeta(meta, path, &slice.metadata);
  }));
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "spec", "", [&](const Json& spec, const std::string& path) {
    TOPOFIT_RETURN_IF_ERROR(ReadString(spec, "driver", path, &slice.driver));
    TOPOFIT_RETURN_IF_ERROR(ReadString(spec, "nodeName", path, &slice.node_name));
    TOPOFIT_RETURN_IF_ERROR(ReadObject(spec, "pool", path, [&](const Json& pool, const std::string& pool_path) {
      TOPOFIT_RETURN_IF_ERROR(ReadString(pool, "name", pool_path, &slice.pool));
      std::optional<int64_t> generation;
      TOPOFIT_RETURN_IF_ERROR(ReadInt(pool, "generation", pool_path, 0, std::numeric_limits<int64_t>::max(), &generation));
      slice.pool_generation = generation.value_or(0);
      return absl::OkStatus();
    }));
    return ReadArray(spec, "devices", path, &slice.devices, ReadSliceDevice);
  }));
  return slice;
}

absl::StatusOr<kube::ResourceClaim> ResourceClaimFromJson(const nlohmann::json& json) {
  kube::ResourceClaim claim;
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, ""));
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "metadata", "", [&](const Json& meta, const std::string& path) {
    return ReadObjectMeta(meta, path, &claim.metadata);
  }));
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "spec", "", [&](const Json& spec, const std::string& path) {
    return ReadObject(spec, "devices", path, [&](const Json& devices, const std::string& devices_path) {
      TOPOFIT_RETURN_IF_ERROR(ReadArray(devices, "requests", devices_path, &claim.requests, ReadDeviceRequest));
      return ReadArray(devices, "constraints", devices_path, &claim.constraints, ReadDeviceConstraint);
    });
  }));
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "status", "", [&](const Json& status, const std::string& path) {
    TOPOFIT_RETURN_IF_ERROR(ReadArray(status, "reservedFor", path, &claim.reserved_for, ReadConsumer));
    return ReadObject(status, "allocation", path, [&](const Json& allocation, const std::string& allocation_path) {
      claim.allocated = true;
      TOPOFIT_RETURN_IF_ERROR(ReadAllocatedNode(allocation, allocation_path, &claim.node_name));
      return ReadObject(allocation, "devices", allocation_path, [&](const Json& devices, const std::string& devices_path) {
        return ReadArray(devices, "results", devices_path, &claim.devices, ReadAllocatedDevice);
      });
    });
  }));
  return claim;
}

}  // namespace topofit::codec
