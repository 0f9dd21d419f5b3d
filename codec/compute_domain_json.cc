#include "codec/compute_domain_json.h"

#include <limits>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "codec/decode_path.h"
#include "codec/json_read.h"

namespace topofit::codec {
namespace {

using namespace json_read;  // the readers every Kubernetes decoder shares

absl::Status ReadDomainNode(const Json& json, const std::string& path, kube::ComputeDomainNode* out) {
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, path));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "name", path, &out->name));
  TOPOFIT_RETURN_IF_ERROR(ReadString(json, "cliqueID", path, &out->clique_id));
  return ReadString(json, "status", path, &out->status);
}

// v1beta2 keeps a converted object's spec.numNodes in an annotation; the driver writes it in decimal.
absl::Status ReadNumNodesAnnotation(const kube::ObjectMeta& meta, std::optional<int>* num_nodes) {
  auto it = meta.annotations.find(kube::kComputeDomainNumNodesAnnotation);
  if (it == meta.annotations.end()) return absl::OkStatus();
  int value = 0;
  if (!absl::SimpleAtoi(it->second, &value) || value < 0) {
    return PathError(MapKey("metadata.annotations", it->first),
                     absl::StrCat("expected a whole number of nodes, not \"", it->second, "\""));
  }
  if (value > 0) *num_nodes = value;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<kube::ComputeDomain> ComputeDomainFromJson(const nlohmann::json& json) {
  kube::ComputeDomain domain;
  TOPOFIT_RETURN_IF_ERROR(ExpectObject(json, ""));
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "metadata", "", [&](const Json& meta, const std::string& path) {
    return ReadObjectMeta(meta, path, &domain.metadata);
  }));
  TOPOFIT_RETURN_IF_ERROR(ReadNumNodesAnnotation(domain.metadata, &domain.num_nodes));
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "spec", "", [&](const Json& spec, const std::string& path) {
    std::optional<int64_t> num_nodes;
    TOPOFIT_RETURN_IF_ERROR(ReadInt(spec, "numNodes", path, 0, std::numeric_limits<int32_t>::max(), &num_nodes));
    if (num_nodes && *num_nodes > 0) domain.num_nodes = static_cast<int>(*num_nodes);
    return ReadObject(spec, "channel", path, [&](const Json& channel, const std::string& channel_path) {
      return ReadObject(channel, "resourceClaimTemplate", channel_path, [&](const Json& tmpl, const std::string& tmpl_path) {
        return ReadString(tmpl, "name", tmpl_path, &domain.channel_template);
      });
    });
  }));
  TOPOFIT_RETURN_IF_ERROR(ReadObject(json, "status", "", [&](const Json& status, const std::string& path) {
    return ReadArray(status, "nodes", path, &domain.nodes, ReadDomainNode);
  }));
  return domain;
}

}  // namespace topofit::codec
