#include "codec/admission_json.h"

#include <tuple>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "codec/bounded_json.h"

namespace topofit::codec {
namespace {

using Json = nlohmann::json;

// The string at `key` of `object`; "" when absent or null; InvalidArgument when another type, or when
// `required` and empty.
absl::StatusOr<std::string> StringField(const Json& object, const char* key, const std::string& path, bool required) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) {
    if (required) return absl::InvalidArgumentError(absl::StrCat(path, key, ": missing"));
    return std::string();
  }
  if (!it->is_string()) return absl::InvalidArgumentError(absl::StrCat(path, key, ": want a string"));
  if (required && it->get_ref<const std::string&>().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, key, ": empty"));
  }
  return it->get<std::string>();
}

}  // namespace

absl::StatusOr<AdmissionRequest> ParseAdmissionReview(absl::string_view body) {
  absl::StatusOr<Json> json = ParseBoundedJson(body, kRequestJsonLimits, "AdmissionReview");
  if (!json.ok()) return json.status();
  if (!json->is_object()) return absl::InvalidArgumentError("AdmissionReview: want a JSON object");
  absl::StatusOr<std::string> api_version = StringField(*json, "apiVersion", "", true);
  if (!api_version.ok()) return api_version.status();
  if (*api_version != kAdmissionApiVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("apiVersion: want ", kAdmissionApiVersion, ", not \"", absl::CHexEscape(*api_version), "\""));
  }
  absl::StatusOr<std::string> kind = StringField(*json, "kind", "", true);
  if (!kind.ok()) return kind.status();
  if (*kind != "AdmissionReview") {
    return absl::InvalidArgumentError(absl::StrCat("kind: want AdmissionReview, not \"", absl::CHexEscape(*kind), "\""));
  }
  const auto request = json->find("request");
  if (request == json->end() || !request->is_object()) return absl::InvalidArgumentError("request: want an object");

  AdmissionRequest out;
  const std::string path = "request.";
  for (auto [key, field, required] : {std::tuple{"uid", &out.uid, true}, std::tuple{"operation", &out.operation, true},
                                      std::tuple{"namespace", &out.namespace_name, false},
                                      std::tuple{"name", &out.name, false}}) {
    absl::StatusOr<std::string> value = StringField(*request, key, path, required);
    if (!value.ok()) return value.status();
    *field = *std::move(value);
  }
  const auto object_kind = request->find("kind");
  if (object_kind == request->end() || !object_kind->is_object()) {
    return absl::InvalidArgumentError("request.kind: want an object {group, version, kind}");
  }
  const std::string kind_path = "request.kind.";
  for (auto [key, field, required] : {std::tuple{"group", &out.group, false}, std::tuple{"version", &out.version, true},
                                      std::tuple{"kind", &out.kind, true}}) {
    absl::StatusOr<std::string> value = StringField(*object_kind, key, kind_path, required);
    if (!value.ok()) return value.status();
    *field = *std::move(value);
  }
  if (const auto dry_run = request->find("dryRun"); dry_run != request->end() && !dry_run->is_null()) {
    if (!dry_run->is_boolean()) return absl::InvalidArgumentError("request.dryRun: want true or false");
    out.dry_run = dry_run->get<bool>();
  }
  if (const auto object = request->find("object"); object != request->end() && !object->is_null()) {
    if (!object->is_object()) return absl::InvalidArgumentError("request.object: want a JSON object");
    out.object = std::move(*object);
  }
  return out;
}

std::string AdmissionReviewToJson(const AdmissionResponse& response) {
  Json body = {{"uid", response.uid}, {"allowed", true}};
  if (response.patch) {
    body["patchType"] = "JSONPatch";
    body["patch"] = absl::Base64Escape(response.patch->dump());
  }
  if (!response.warnings.empty()) body["warnings"] = response.warnings;
  const Json review = {{"apiVersion", kAdmissionApiVersion}, {"kind", "AdmissionReview"}, {"response", std::move(body)}};
  // Replacement of invalid UTF-8 rather than an exception: warnings can quote what the pod said.
  return review.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string JsonPointerToken(absl::string_view key) {
  return absl::StrReplaceAll(key, {{"~", "~0"}, {"/", "~1"}});
}

}  // namespace topofit::codec
