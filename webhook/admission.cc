#include "webhook/admission.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codec/kube_json.h"
#include "codec/node_affinity_json.h"
#include "decision/pod_demand.h"
#include "decision/topology_affinity.h"
#include "kube/topofit_annotations.h"
#include "topology/link.h"

namespace topofit::webhook {
namespace {

using Json = nlohmann::json;

constexpr char kAffinityPath[] = "/spec/affinity";
constexpr char kNodeAffinityPath[] = "/spec/affinity/nodeAffinity";
constexpr char kRequiredPath[] = "/spec/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution";

// The member `key` of `object`, or nullptr when `object` is not an object or the member is absent or null
// (Go's nil: the API server writes both).
const Json* Member(const Json* object, const char* key) {
  if (object == nullptr || !object->is_object()) return nullptr;
  const auto it = object->find(key);
  return it == object->end() || it->is_null() ? nullptr : &*it;
}

Json Add(std::string path, Json value) { return {{"op", "add"}, {"path", std::move(path)}, {"value", std::move(value)}}; }

// The operations that make `pod`'s required node-affinity terms `terms` and add the annotation. `add` at
// the first level that is missing creates the levels below it; an `add` on a member that exists replaces it
// (RFC 6902, 4.1).
Json AffinityPatch(const Json& pod, Json terms) {
  Json patch = Json::array();
  const Json* spec = Member(&pod, "spec");
  const Json* affinity = Member(spec, "affinity");
  const Json* node_affinity = Member(affinity, "nodeAffinity");
  const Json* required = Member(node_affinity, "requiredDuringSchedulingIgnoredDuringExecution");
  Json selector = {{"nodeSelectorTerms", std::move(terms)}};
  if (affinity == nullptr) {
    patch.push_back(Add(kAffinityPath, {{"nodeAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution", selector}}}}));
  } else if (node_affinity == nullptr) {
    patch.push_back(Add(kNodeAffinityPath, {{"requiredDuringSchedulingIgnoredDuringExecution", selector}}));
  } else if (required == nullptr) {
    patch.push_back(Add(kRequiredPath, selector));
  } else {
    patch.push_back(Add(absl::StrCat(kRequiredPath, "/nodeSelectorTerms"), selector["nodeSelectorTerms"]));
  }
  // A pod that requires a topology says so in its annotations: the map exists.
  patch.push_back(Add(absl::StrCat("/metadata/annotations/", codec::JsonPointerToken(kube::kTopologyAffinityAnnotation)),
                      "written"));
  return patch;
}

// "4 GPUs, min-link NV, min-bandwidth 200 GB/s": what the pod requires, in its annotations' terms.
std::string RequestText(const topology::AllocationRequest& request) {
  std::string text = absl::StrCat(request.gpus, " GPUs");
  if (request.min_link != topology::LinkClass::kSys) {
    absl::StrAppend(&text, ", min-link ", topology::LinkClassName(request.min_link));
  }
  if (request.min_bandwidth_mbps > 0) absl::StrAppend(&text, ", min-bandwidth ", request.min_bandwidth_mbps / 1000, " GB/s");
  return text;
}

Admission Allowed(const codec::AdmissionRequest& request, Outcome outcome, std::string warning = "") {
  Admission admission;
  admission.response.uid = request.uid;
  admission.outcome = outcome;
  if (!warning.empty()) admission.response.warnings.push_back(absl::StrCat("topofit: ", warning));
  return admission;
}

}  // namespace

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPatched: return "patched";
    case Outcome::kNotPodCreate: return "not_pod_create";
    case Outcome::kNotRequired: return "not_required";
    case Outcome::kAlreadyWritten: return "already_written";
    case Outcome::kNoTemplates: return "no_templates";
    case Outcome::kNoGroup: return "no_group";
    case Outcome::kUnreadable: return "unreadable";
  }
  return "unknown";
}

Admission Admit(const codec::AdmissionRequest& request, const kube::NodeTemplates& templates,
                decision::TopologySource& topologies) {
  if (!request.group.empty() || request.version != "v1" || request.kind != "Pod" || request.operation != "CREATE") {
    return Allowed(request, Outcome::kNotPodCreate);
  }
  absl::StatusOr<kube::Pod> pod = codec::PodFromJson(request.object);
  if (!pod.ok()) {
    return Allowed(request, Outcome::kUnreadable,
                   absl::StrCat("pod not read, no node affinity written: ", pod.status().message()));
  }
  absl::StatusOr<decision::GpuDemand> demand = decision::DemandOf(*pod);
  if (!demand.ok()) return Allowed(request, Outcome::kUnreadable, std::string(demand.status().message()));
  if (!demand->wants_gpus() || !demand->constraints_required()) return Allowed(request, Outcome::kNotRequired);
  if (pod->metadata.annotations.contains(std::string(kube::kTopologyAffinityAnnotation))) {
    return Allowed(request, Outcome::kAlreadyWritten);
  }
  const topology::AllocationRequest required = decision::EnforcedRequest(*demand);
  if (templates.empty()) {
    return Allowed(request, Outcome::kNoTemplates,
                   absl::StrCat("no node group known yet, no node affinity written for ", RequestText(required)));
  }
  // Kept for the call: GroupShape points into them.
  std::vector<std::shared_ptr<const topology::Topology>> resolved;
  std::vector<decision::GroupShape> groups;
  resolved.reserve(templates.size());
  for (const auto& [id, template_node] : templates) {
    // A group without GPUs (or whose topology does not resolve) serves no GPU pod.
    absl::StatusOr<decision::NodeTopology> topology = topologies.Resolve(*template_node);
    resolved.push_back(topology.ok() ? topology->topology : nullptr);
    groups.push_back({template_node.get(), resolved.back().get()});
  }
  std::vector<kube::NodeSelectorTerm> terms = decision::TopologyShapeTerms(*pod, required, groups);
  if (terms.empty()) {
    return Allowed(request, Outcome::kNoGroup,
                   absl::StrCat("no node group this pod may use gives ", RequestText(required),
                                " on an empty node; no node affinity written"));
  }
  const Json* own = Member(Member(Member(Member(Member(&request.object, "spec"), "affinity"), "nodeAffinity"),
                                  "requiredDuringSchedulingIgnoredDuringExecution"),
                           "nodeSelectorTerms");
  Admission admission = Allowed(request, Outcome::kPatched);
  admission.response.patch = AffinityPatch(request.object, codec::ConfinedTerms(own != nullptr ? *own : Json(), terms));
  return admission;
}

}  // namespace topofit::webhook
