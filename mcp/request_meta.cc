#include "mcp/request_meta.h"

#include "absl/strings/str_cat.h"

namespace topofit::mcp {
namespace {

const nlohmann::json* MetaOf(const nlohmann::json& params) {
  const auto meta = params.find("_meta");
  return meta != params.end() && meta->is_object() ? &*meta : nullptr;
}

absl::Status Invalid(absl::string_view key, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("Invalid params: _meta ", key, " ", problem));
}

}  // namespace

bool ClaimsRequestMeta(const nlohmann::json& params) {
  const nlohmann::json* meta = MetaOf(params);
  return meta != nullptr && meta->contains(kProtocolVersionKey);
}

absl::StatusOr<std::string> RequestMetaVersion(const nlohmann::json& params) {
  const nlohmann::json* meta = MetaOf(params);
  if (meta == nullptr) return absl::InvalidArgumentError("Invalid params: no _meta (2026-07-28 requests carry one)");
  const auto version = meta->find(kProtocolVersionKey);
  if (version == meta->end()) return Invalid(kProtocolVersionKey, "is missing");
  if (!version->is_string()) return Invalid(kProtocolVersionKey, "must be a string");
  const auto capabilities = meta->find(kClientCapabilitiesKey);
  if (capabilities == meta->end()) return Invalid(kClientCapabilitiesKey, "is missing");
  if (!capabilities->is_object()) return Invalid(kClientCapabilitiesKey, "must be an object");
  if (const auto info = meta->find(kClientInfoKey); info != meta->end()) {
    const bool named = info->is_object() && info->contains("name") && info->at("name").is_string() &&
                       info->contains("version") && info->at("version").is_string();
    if (!named) return Invalid(kClientInfoKey, "must be an object with a string name and version");
  }
  return version->get<std::string>();
}

}  // namespace topofit::mcp
