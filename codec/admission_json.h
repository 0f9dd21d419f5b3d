#pragma once

// admission.k8s.io/v1 AdmissionReview, the wire of a mutating admission webhook: the request the API server
// sends and the response it reads back. Only what topofit's webhook reads is decoded.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace topofit::codec {

inline constexpr char kAdmissionApiVersion[] = "admission.k8s.io/v1";

// AdmissionReview.request.
struct AdmissionRequest {
  std::string uid;  // copied into the response: the API server matches the two by it
  // request.kind: the object's group, version and kind ("", "v1", "Pod" for a pod).
  std::string group;
  std::string version;
  std::string kind;
  std::string operation;  // CREATE, UPDATE, DELETE or CONNECT
  std::string namespace_name;
  std::string name;  // empty on CREATE when the object has only metadata.generateName
  bool dry_run = false;
  nlohmann::json object;  // request.object as sent; null when absent (DELETE)
};

// Decodes an AdmissionReview (apiVersion admission.k8s.io/v1, kind AdmissionReview) with its request.
// InvalidArgument, naming the field, for malformed JSON, JSON beyond kRequestJsonLimits (json_limits.h), another
// apiVersion or kind, a missing request, a request without uid, kind or operation, or an object that is not
// a JSON object.
absl::StatusOr<AdmissionRequest> ParseAdmissionReview(absl::string_view body);

// AdmissionReview.response for a request that is allowed.
struct AdmissionResponse {
  std::string uid;
  // RFC 6902 JSON Patch operations applied to the object (patchType JSONPatch); none: the object is left
  // as it was.
  std::optional<nlohmann::json> patch;
  // Shown to the client that made the request (kubectl prints them), one short sentence each.
  std::vector<std::string> warnings;
};

// The AdmissionReview holding `response`: allowed, with the patch base64-encoded when there is one.
std::string AdmissionReviewToJson(const AdmissionResponse& response);

// `key` as one reference token of an RFC 6901 JSON Pointer (JSON Patch paths): "~" written "~0" and "/"
// written "~1", so "topofit.io/x" is "topofit.io~1x".
std::string JsonPointerToken(absl::string_view key);

}  // namespace topofit::codec
