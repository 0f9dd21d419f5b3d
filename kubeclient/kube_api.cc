#include "kubeclient/kube_api.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "codec/kube_json.h"

namespace topofit::kubeclient {

std::string PodPath(absl::string_view namespace_name, absl::string_view name) {
  return absl::StrCat("/api/v1/namespaces/", EscapePathSegment(namespace_name), "/pods/", EscapePathSegment(name));
}

absl::StatusOr<kube::Pod> KubeApi::GetPod(const std::string& namespace_name, const std::string& name) {
  absl::StatusOr<nlohmann::json> json = rest_.Get(PodPath(namespace_name, name));
  if (!json.ok()) return json.status();
  return codec::PodFromJson(*json);
}

absl::Status KubeApi::AnnotatePod(const std::string& namespace_name, const std::string& name,
                                  const std::string& key, const std::string& value) {
  // A merge patch replaces only the keys it names, so other writers' annotations survive without a
  // read-modify-write cycle.
  const nlohmann::json patch = {{"metadata", {{"annotations", {{key, value}}}}}};
  return rest_.Patch(PodPath(namespace_name, name), patch, "application/merge-patch+json").status();
}

absl::Status KubeApi::BindPod(const std::string& namespace_name, const std::string& name, const std::string& uid,
                              const std::string& node) {
  nlohmann::json metadata = {{"name", name}, {"namespace", namespace_name}};
  if (!uid.empty()) metadata["uid"] = uid;
  const nlohmann::json binding = {
      {"apiVersion", "v1"},
      {"kind", "Binding"},
      {"metadata", std::move(metadata)},
      {"target", {{"kind", "Node"}, {"name", node}}},
  };
  return rest_.Post(absl::StrCat(PodPath(namespace_name, name), "/binding"), binding).status();
}

}  // namespace topofit::kubeclient
