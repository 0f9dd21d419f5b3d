#include "codec/json_read.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "topology/quoted.h"

namespace topofit::codec::json_read {

absl::Status PathError(const std::string& path, absl::string_view what) {
  return absl::InvalidArgumentError(path.empty() ? std::string(what) : absl::StrCat(path, ": ", what));
}
absl::Status TypeError(const std::string& path, absl::string_view expected, const Json& found) {
  return PathError(path, absl::StrCat("expected ", expected, ", found ", found.type_name()));
}

// Go's decoder leaves a field at its zero value both when it is absent and when it is null, so both read
// as "not there".
const Json* Member(const Json& object, absl::string_view key) {
  const auto it = object.find(std::string(key));
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

absl::Status ReadString(const Json& value, const std::string& path, std::string* out) {
  if (value.is_null()) return absl::OkStatus();
  if (!value.is_string()) return TypeError(path, "a string", value);
  *out = value.get_ref<const std::string&>();
  return absl::OkStatus();
}

absl::Status ReadString(const Json& parent, absl::string_view key, const std::string& path, std::string* out) {
  const Json* value = Member(parent, key);
  return value == nullptr ? absl::OkStatus() : ReadString(*value, Field(path, key), out);
}

absl::Status ReadOptionalString(const Json& parent, absl::string_view key, const std::string& path,
                                std::optional<std::string>* out) {
  const Json* value = Member(parent, key);
  return value == nullptr ? absl::OkStatus() : ReadString(*value, Field(path, key), &out->emplace());
}

absl::Status ReadBool(const Json& parent, absl::string_view key, const std::string& path, bool* out) {
  const Json* value = Member(parent, key);
  if (value == nullptr) return absl::OkStatus();
  if (!value->is_boolean()) return TypeError(Field(path, key), "a boolean", *value);
  *out = value->get<bool>();
  return absl::OkStatus();
}

absl::Status ReadInt(const Json& parent, absl::string_view key, const std::string& path, int64_t min, int64_t max,
                     std::optional<int64_t>* out) {
  const Json* value = Member(parent, key);
  if (value == nullptr) return absl::OkStatus();
  const std::string child = Field(path, key);
  if (!value->is_number_integer()) return TypeError(child, "an integer", *value);
  // get<int64_t>() would wrap an unsigned value above INT64_MAX.
  const bool too_large = value->is_number_unsigned() && value->get<uint64_t>() > static_cast<uint64_t>(max);
  const int64_t number = too_large ? max : value->get<int64_t>();
  if (too_large || number < min || number > max) {
    return PathError(child, absl::StrCat("must be ", min, " to ", max, ", found ", value->dump()));
  }
  *out = number;
  return absl::OkStatus();
}

absl::Status ReadInt32(const Json& parent, absl::string_view key, const std::string& path, int32_t* out) {
  std::optional<int64_t> value;
  TOPOFIT_RETURN_IF_ERROR(ReadInt(parent, key, path, std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::max(), &value));
  if (value) *out = static_cast<int32_t>(*value);
  return absl::OkStatus();
}

// metav1.Time: RFC 3339 text, kept to whole seconds as the API does.
absl::Status ReadTime(const Json& parent, absl::string_view key, const std::string& path, int64_t* seconds) {
  std::string text;
  TOPOFIT_RETURN_IF_ERROR(ReadString(parent, key, path, &text));
  if (text.empty()) return absl::OkStatus();
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &time, &error)) {
    return PathError(Field(path, key), absl::StrCat("not an RFC 3339 time: ", topology::Quoted(text), " (", error, ")"));
  }
  *seconds = absl::ToUnixSeconds(time);
  return absl::OkStatus();
}

absl::Status ReadStringMap(const Json& parent, absl::string_view key, const std::string& path, kube::StringMap* out) {
  return ReadObject(parent, key, path, [&](const Json& object, const std::string& map_path) {
    for (const auto& [name, value] : object.items()) {
      TOPOFIT_RETURN_IF_ERROR(ReadString(value, MapKey(map_path, name), &(*out)[name]));
    }
    return absl::OkStatus();
  });
}

absl::Status ReadStrings(const Json& parent, absl::string_view key, const std::string& path,
                         std::vector<std::string>* out) {
  return ReadArray(parent, key, path, out,
                   [](const Json& value, const std::string& element_path, std::string* element) {
                     return ReadString(value, element_path, element);
                   });
}

absl::Status ExpectObject(const Json& value, const std::string& path) {
  return value.is_object() ? absl::OkStatus() : TypeError(path, "an object", value);
}

absl::Status ReadOwnerReference(const Json& json, const std::string& path, kube::OwnerReference* out) {
  if (json.is_null()) return absl::OkStatus();
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "kind", path, &out->kind));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "name", path, &out->name));
  return ReadBool(json, "controller", path, &out->controller);
}

absl::Status ReadObjectMeta(const Json& json, const std::string& path, kube::ObjectMeta* out) {
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "name", path, &out->name));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "namespace", path, &out->namespace_name));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "uid", path, &out->uid));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "resourceVersion", path, &out->resource_version));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "generateName", path, &out->generate_name));
  TOPOFIT_RETURN_IF_ERROR(ReadTime(json, "creationTimestamp", path, &out->creation_timestamp_seconds));
  int64_t deletion_seconds = 0;
  TOPOFIT_RETURN_IF_ERROR(ReadTime(json, "deletionTimestamp", path, &deletion_seconds));
  out->has_deletion_timestamp = Member(json, "deletionTimestamp") != nullptr;
  TOPOFIT_RETURN_IF_ERROR(ReadStringMap(json, "labels", path, &out->labels));
  TOPOFIT_RETURN_IF_ERROR(ReadStringMap(json, "annotations", path, &out->annotations));
  return ReadArray(json, "ownerReferences", path, &out->owner_references, ReadOwnerReference);
}

}  // namespace topofit::codec::json_read
