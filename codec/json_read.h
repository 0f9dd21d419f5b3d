#pragma once

// The readers every JSON decoder of Kubernetes objects shares (kube_json.cc, dra_json.cc): Go's decoding
// rules in one place. Tolerant where Go's decoder is (unknown fields skipped, `null` reads as absent),
// strict on the fields that are read: a wrong JSON type is an InvalidArgument naming its path
// (decode_path.h). Each reader takes (parent, key, path, out) or, for array elements, (value, path, out).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "codec/decode_path.h"
#include "kube/objects.h"

namespace topofit::codec::json_read {

using Json = nlohmann::json;

absl::Status PathError(const std::string& path, absl::string_view what);
absl::Status TypeError(const std::string& path, absl::string_view expected, const Json& found);

// Go's decoder leaves a field at its zero value both when it is absent and when it is null, so both read
// as "not there".
const Json* Member(const Json& object, absl::string_view key);

// Calls read(value, path) for a member that must be an object, when it is there.
template <typename Read>
absl::Status ReadObject(const Json& parent, absl::string_view key, const std::string& path, Read read) {
  const Json* value = Member(parent, key);
  if (value == nullptr) return absl::OkStatus();
  const std::string child = Field(path, key);
  if (!value->is_object()) return TypeError(child, "an object", *value);
  return read(*value, child);
}

// Calls read(element, path, &out->emplace_back()) for each element of a member that must be an array.
// A null element reads as the element type's zero value, as in Go.
template <typename T, typename Read>
absl::Status ReadArray(const Json& parent, absl::string_view key, const std::string& path, std::vector<T>* out,
                       Read read) {
  const Json* value = Member(parent, key);
  if (value == nullptr) return absl::OkStatus();
  const std::string child = Field(path, key);
  if (!value->is_array()) return TypeError(child, "an array", *value);
  out->reserve(value->size());
  for (size_t i = 0; i < value->size(); ++i) {
    TOPOFIT_RETURN_IF_ERROR(read((*value)[i], Index(child, i), &out->emplace_back()));
  }
  return absl::OkStatus();
}

absl::Status ReadString(const Json& value, const std::string& path, std::string* out);

absl::Status ReadString(const Json& parent, absl::string_view key, const std::string& path, std::string* out);

// A pointer field of Go's (*string): nullopt when absent or null, not "".
absl::Status ReadOptionalString(const Json& parent, absl::string_view key, const std::string& path,
                                std::optional<std::string>* out);

absl::Status ReadBool(const Json& parent, absl::string_view key, const std::string& path, bool* out);

absl::Status ReadInt(const Json& parent, absl::string_view key, const std::string& path, int64_t min, int64_t max,
                     std::optional<int64_t>* out);

absl::Status ReadInt32(const Json& parent, absl::string_view key, const std::string& path, int32_t* out);

// metav1.Time: RFC 3339 text, kept to whole seconds as the API does.
absl::Status ReadTime(const Json& parent, absl::string_view key, const std::string& path, int64_t* seconds);

absl::Status ReadStringMap(const Json& parent, absl::string_view key, const std::string& path, kube::StringMap* out);

absl::Status ReadStrings(const Json& parent, absl::string_view key, const std::string& path,
                         std::vector<std::string>* out);

absl::Status ExpectObject(const Json& value, const std::string& path);

absl::Status ReadOwnerReference(const Json& json, const std::string& path, kube::OwnerReference* out);

absl::Status ReadObjectMeta(const Json& json, const std::string& path, kube::ObjectMeta* out);

}  // namespace topofit::codec::json_read
