#include "kubeclient/capacity_buffers.h"

#include <cctype>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kube/topofit_annotations.h"
#include "kubeclient/provisioning.h"
#include "kubeclient/name_hash.h"

namespace topofit::kubeclient {
namespace {

constexpr size_t kMaxLabelValue = 63;

nlohmann::json Labels(const decision::HeadroomShape& shape) {
  return {{kManagedByLabel, "topofit"}, {kHeadroomShapeLabel, HeadroomObjectName(shape)}};
}

nlohmann::json Metadata(const decision::HeadroomShape& shape, absl::string_view namespace_name) {
  return {{"name", HeadroomObjectName(shape)}, {"namespace", std::string(namespace_name)}, {"labels", Labels(shape)}};
}

// What scheduling reads of the exemplar, labelled as the shape's and with no priority of its own.
nlohmann::json ShapedTemplate(const decision::HeadroomShape& shape, const nlohmann::json& exemplar) {
  nlohmann::json pod_template = SchedulingTemplateOf(
      exemplar, {kube::kMinLinkAnnotation, kube::kMinBandwidthAnnotation, kube::kTopologyPolicyAnnotation});
  pod_template["metadata"]["labels"] = Labels(shape);
  // The buffer is capacity for any pod of the shape, not for the exemplar's priority.
  for (const char* key : {"priority", "priorityClassName", "preemptionPolicy"}) pod_template["spec"].erase(key);
  return pod_template;
}

}  // namespace

std::string HeadroomObjectName(const decision::HeadroomShape& shape) {
  std::string name = "topofit-headroom-";
  for (const char c : shape.Name()) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    name.push_back(std::isalnum(static_cast<unsigned char>(lower)) || lower == '.' ? lower : '-');
  }
  while (!name.empty() && !std::isalnum(static_cast<unsigned char>(name.back()))) name.pop_back();
  if (name.size() <= kMaxLabelValue) return name;
  const std::string hash = absl::StrFormat("%016x", Fnv1a64(shape.Name()));
  name.resize(kMaxLabelValue - hash.size() - 1);
  return absl::StrCat(name, "-", hash);
}

nlohmann::json HeadroomPodTemplate(const decision::HeadroomShape& shape, absl::string_view namespace_name,
                                   const nlohmann::json& exemplar) {
  return {{"apiVersion", "v1"},
          {"kind", "PodTemplate"},
          {"metadata", Metadata(shape, namespace_name)},
          {"template", ShapedTemplate(shape, exemplar)}};
}

nlohmann::json CapacityBufferObject(const decision::HeadroomShape& shape, absl::string_view namespace_name,
                                    absl::string_view version, int replicas) {
  return {{"apiVersion", absl::StrCat(kCapacityBufferGroup, "/", version)},
          {"kind", "CapacityBuffer"},
          {"metadata", Metadata(shape, namespace_name)},
          {"spec",
           {{"provisioningStrategy", kActiveCapacityStrategy},
            {"podTemplateRef", {{"name", HeadroomObjectName(shape)}}},
            {"replicas", replicas}}}};
}

nlohmann::json PlaceholderDeployment(const decision::HeadroomShape& shape, absl::string_view namespace_name,
                                     const nlohmann::json& exemplar, int replicas) {
  nlohmann::json pod_template = ShapedTemplate(shape, exemplar);
  nlohmann::json& spec = pod_template["spec"];
  spec["priorityClassName"] = kPlaceholderPriorityClass;
  spec["terminationGracePeriodSeconds"] = 0;
  // The default scheduler places them: a secondary scheduler's extender would judge them as real pods.
  spec.erase("schedulerName");
  for (const char* containers : {"containers", "initContainers"}) {
    if (!spec.contains(containers)) continue;
    for (nlohmann::json& container : spec[containers]) {
      container["image"] = kPlaceholderImage;
      container.erase("ports");
    }
  }
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", Metadata(shape, namespace_name)},
          {"spec",
           {{"replicas", replicas},
            {"selector", {{"matchLabels", Labels(shape)}}},
            {"template", std::move(pod_template)}}}};
}

nlohmann::json PlaceholderPriorityClass() {
  return {{"apiVersion", "scheduling.k8s.io/v1"},
          {"kind", "PriorityClass"},
          {"metadata", {{"name", kPlaceholderPriorityClass}, {"labels", {{kManagedByLabel, "topofit"}}}}},
          {"value", kPlaceholderPriority},
          {"preemptionPolicy", "Never"},
          {"globalDefault", false},
          {"description", "topofit's headroom placeholders: preempted by any pod, counted by cluster-autoscaler"}};
}

bool IsHeadroomPlaceholder(const nlohmann::json& pod) {
  if (!pod.is_object()) return false;
  const auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return false;
  const auto priority_class = spec->find("priorityClassName");
  return priority_class != spec->end() && *priority_class == kPlaceholderPriorityClass;
}

}  // namespace topofit::kubeclient
