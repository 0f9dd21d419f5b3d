#include "kubeclient/provisioning.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "codec/node_affinity_json.h"
#include "kube/topofit_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "kubeclient/name_hash.h"
#include "scheduler/capacity_requests.h"

namespace topofit::kubeclient {
namespace {

constexpr size_t kMaxNameLength = 253;
constexpr char kHostnameLabel[] = "kubernetes.io/hostname";

std::string StringAt(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// Copies the keys of `from` named in `keys` that are present.
nlohmann::json Keep(const nlohmann::json& from, std::initializer_list<const char*> keys) {
  nlohmann::json kept = nlohmann::json::object();
  if (!from.is_object()) return kept;
  for (const char* key : keys) {
    if (const auto it = from.find(key); it != from.end() && !it->is_null()) kept[key] = *it;
  }
  return kept;
}

// The containers' scheduling fields, without their references to the pod's ResourceClaims (resources.claims):
// the template has no claims of its own for them to name until GiveClaims adds some.
nlohmann::json KeepContainers(const nlohmann::json& containers) {
  nlohmann::json kept = nlohmann::json::array();
  if (!containers.is_array()) return kept;
  for (const nlohmann::json& container : containers) {
    nlohmann::json& copy = kept.emplace_back(Keep(container, {"name", "image", "resources", "ports", "restartPolicy"}));
    if (copy.contains("resources") && copy["resources"].is_object()) copy["resources"].erase("claims");
  }
  return kept;
}

// The pod's ResourceClaims entries, each naming the claim the pod uses: its own resourceClaimName, or the
// claim the resource-claim controller made from its template (status.resourceClaimStatuses). An entry the
// controller found needs no claim is left out.
absl::StatusOr<nlohmann::json> ClaimsByNameOf(const nlohmann::json& pod) {
  nlohmann::json by_name = nlohmann::json::array();
  const nlohmann::json* entries = nullptr;
  if (pod.is_object() && pod.contains("spec") && pod["spec"].is_object() && pod["spec"].contains("resourceClaims")) {
    entries = &pod["spec"]["resourceClaims"];
  }
  if (entries == nullptr || !entries->is_array()) return by_name;
  const nlohmann::json* statuses = nullptr;
  if (pod.contains("status") && pod["status"].is_object() && pod["status"].contains("resourceClaimStatuses")) {
    statuses = &pod["status"]["resourceClaimStatuses"];
  }
  for (const nlohmann::json& entry : *entries) {
    const std::string name = StringAt(entry, "name");
    std::string claim = StringAt(entry, "resourceClaimName");
    bool made = !claim.empty();
    if (!made && statuses != nullptr && statuses->is_array()) {
      for (const nlohmann::json& status : *statuses) {
        if (StringAt(status, "name") != name) continue;
        claim = StringAt(status, "resourceClaimName");
        made = true;  // without a claim name: none was needed
      }
    }
    if (!made) {
      return absl::FailedPreconditionError(absl::StrCat("the ResourceClaim of ", name, " (template \"",
                                                        StringAt(entry, "resourceClaimTemplateName"),
                                                        "\") is not made yet"));
    }
    if (!claim.empty()) by_name.push_back({{"name", name}, {"resourceClaimName", claim}});
  }
  return by_name;
}

// Gives the template `spec` the claims `by_name` (ClaimsByNameOf, not empty: the pod has a spec) and, in
// each of its containers, the pod's references to them (KeepContainers keeps the pod's containers in order).
void GiveClaims(nlohmann::json& spec, const nlohmann::json& pod_spec, const nlohmann::json& by_name) {
  spec["resourceClaims"] = by_name;
  std::set<std::string> names;
  for (const nlohmann::json& entry : by_name) names.insert(StringAt(entry, "name"));
  for (const char* key : {"containers", "initContainers"}) {
    if (!spec.contains(key) || !pod_spec.contains(key) || !pod_spec[key].is_array()) continue;
    for (size_t i = 0; i < spec[key].size() && i < pod_spec[key].size(); ++i) {
      const nlohmann::json& resources = pod_spec[key][i].is_object() && pod_spec[key][i].contains("resources")
                                            ? pod_spec[key][i]["resources"]
                                            : nlohmann::json();
      if (!resources.is_object() || !resources.contains("claims") || !resources["claims"].is_array()) continue;
      nlohmann::json claims = nlohmann::json::array();
      for (const nlohmann::json& claim : resources["claims"]) {
        if (names.count(StringAt(claim, "name")) > 0) claims.push_back(claim);
      }
      if (!claims.empty()) spec[key][i]["resources"]["claims"] = std::move(claims);
    }
  }
}

struct PodIdentity {
  std::string name;
  std::string namespace_name;
  std::string uid;
};

absl::StatusOr<PodIdentity> IdentityOf(const nlohmann::json& pod) {
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& metadata = pod.is_object() && pod.contains("metadata") ? pod["metadata"] : empty;
  PodIdentity identity{StringAt(metadata, "name"), StringAt(metadata, "namespace"), StringAt(metadata, "uid")};
  if (identity.name.empty() || identity.namespace_name.empty() || identity.uid.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pod needs metadata.name, namespace and uid for a ProvisioningRequest (name \"",
                     identity.name, "\")"));
  }
  return identity;
}

nlohmann::json ObjectMetaFor(const PodIdentity& pod) {
  return {
      {"name", ProvisioningObjectName(pod.name)},
      {"namespace", pod.namespace_name},
      {"labels", {{"app.kubernetes.io/managed-by", "topofit"}}},
      {"ownerReferences",
       nlohmann::json::array({{{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", pod.name}, {"uid", pod.uid}}})},
  };
}

// Makes each required node-affinity term of `spec` one term per shape, ANDed with it; with no term, the
// shapes become the terms. Nothing changes without shapes.
void ConfineToShapes(nlohmann::json& spec, const std::vector<kube::NodeSelectorTerm>& shapes) {
  if (shapes.empty()) return;
  nlohmann::json& terms =
      spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  terms = codec::ConfinedTerms(terms, shapes);
}

// Adds `hostname NotIn refused` to every required node-affinity term of `spec`, or makes it the only term.
void ExcludeNodes(nlohmann::json& spec, std::vector<std::string> refused) {
  if (refused.empty()) return;
  std::sort(refused.begin(), refused.end());
  refused.erase(std::unique(refused.begin(), refused.end()), refused.end());
  const nlohmann::json expression = {{"key", kHostnameLabel}, {"operator", "NotIn"}, {"values", refused}};
  nlohmann::json& required =
      spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
  nlohmann::json& terms = required["nodeSelectorTerms"];
  if (!terms.is_array() || terms.empty()) {
    terms = nlohmann::json::array({{{"matchExpressions", nlohmann::json::array({expression})}}});
    return;
  }
  for (nlohmann::json& term : terms) {
    nlohmann::json& expressions = term["matchExpressions"];
    if (!expressions.is_array()) expressions = nlohmann::json::array();
    expressions.push_back(expression);
  }
}

}  // namespace

nlohmann::json SchedulingTemplateOf(const nlohmann::json& pod, std::initializer_list<absl::string_view> annotations) {
  const nlohmann::json empty = nlohmann::json::object();
  const nlohmann::json& metadata = pod.is_object() && pod.contains("metadata") ? pod["metadata"] : empty;
  const nlohmann::json& pod_spec = pod.is_object() && pod.contains("spec") ? pod["spec"] : empty;

  nlohmann::json template_metadata = nlohmann::json::object();
  if (metadata.contains("labels") && metadata["labels"].is_object()) template_metadata["labels"] = metadata["labels"];
  if (metadata.contains("annotations") && metadata["annotations"].is_object()) {
    for (absl::string_view key : annotations) {
      auto it = metadata["annotations"].find(key);
      if (it != metadata["annotations"].end()) template_metadata["annotations"][std::string(key)] = *it;
    }
  }

  nlohmann::json spec = Keep(pod_spec, {"nodeSelector", "affinity", "tolerations", "topologySpreadConstraints",
                                        "priorityClassName", "priority", "preemptionPolicy", "schedulerName",
                                        "runtimeClassName", "overhead", "hostNetwork"});
  spec["containers"] = KeepContainers(pod_spec.is_object() && pod_spec.contains("containers")
                                          ? pod_spec["containers"]
                                          : nlohmann::json::array());
  if (pod_spec.is_object() && pod_spec.contains("initContainers")) {
    spec["initContainers"] = KeepContainers(pod_spec["initContainers"]);
  }
  return {{"metadata", std::move(template_metadata)}, {"spec", std::move(spec)}};
}

namespace {

// The template of `pod`'s spec as PodTemplateForPod describes it, `annotations` kept of its own.
nlohmann::json TemplateOf(const nlohmann::json& pod, const PodIdentity& identity,
                          std::initializer_list<absl::string_view> annotations) {
  nlohmann::json pod_template = SchedulingTemplateOf(pod, annotations);
  pod_template["metadata"]["annotations"][std::string(kube::kStandsForPodUidAnnotation)] = identity.uid;
  return pod_template;
}

nlohmann::json PodTemplateObject(nlohmann::json metadata, nlohmann::json pod_template) {
  return nlohmann::json{
      {"apiVersion", "v1"},
      {"kind", "PodTemplate"},
      {"metadata", std::move(metadata)},
      {"template", std::move(pod_template)},
  };
}

nlohmann::json PodSet(const std::string& template_name, int count) {
  return {{"count", count}, {"podTemplateRef", {{"name", template_name}}}};
}

nlohmann::json ProvisioningRequestObject(nlohmann::json metadata, nlohmann::json pod_sets) {
  return nlohmann::json{
      {"apiVersion", kProvisioningApiVersion},
      {"kind", "ProvisioningRequest"},
      {"metadata", std::move(metadata)},
      {"spec", {{"provisioningClassName", kBestEffortAtomicScaleUp}, {"podSets", std::move(pod_sets)}}},
  };
}

// One request of `count` pods of the template named as the request.
nlohmann::json ProvisioningRequestObject(nlohmann::json metadata, int count) {
  nlohmann::json pod_sets = nlohmann::json::array({PodSet(metadata["name"].get<std::string>(), count)});
  return ProvisioningRequestObject(std::move(metadata), std::move(pod_sets));
}

// The metadata of an object owned by `member`, named `name`.
nlohmann::json OwnedObjectMeta(const PodIdentity& member, const std::string& name) {
  nlohmann::json metadata = ObjectMetaFor(member);
  metadata["name"] = name;
  return metadata;
}

// The metadata of a gang's objects: named for the gang, owned by the member that asked.
nlohmann::json GangObjectMeta(const PodIdentity& member, absl::string_view gang_id) {
  return OwnedObjectMeta(member, GangProvisioningObjectName(gang_id));
}

}  // namespace

std::string ProvisioningObjectName(absl::string_view pod_name) {
  std::string name = absl::StrCat("topofit-", pod_name);
  if (name.size() <= kMaxNameLength) return name;
  const std::string suffix = absl::StrFormat("-%016x", Fnv1a64(pod_name));
  name.resize(kMaxNameLength - suffix.size());
  // A subdomain's parts must end in an alphanumeric character.
  while (!name.empty() && (name.back() == '-' || name.back() == '.')) name.pop_back();
  return absl::StrCat(name, suffix);
}

absl::StatusOr<nlohmann::json> PodTemplateForPod(const nlohmann::json& pod,
                                                 const std::vector<std::string>& refused_nodes,
                                                 const std::vector<kube::NodeSelectorTerm>& shapes) {
  absl::StatusOr<PodIdentity> identity = IdentityOf(pod);
  if (!identity.ok()) return identity.status();
  absl::StatusOr<nlohmann::json> claims = ClaimsByNameOf(pod);
  if (!claims.ok()) return claims.status();
  nlohmann::json pod_template = TemplateOf(
      pod, *identity, {kube::kMinLinkAnnotation, kube::kMinBandwidthAnnotation, kube::kTopologyPolicyAnnotation});
  if (!claims->empty()) GiveClaims(pod_template["spec"], pod["spec"], *claims);
  ConfineToShapes(pod_template["spec"], shapes);
  ExcludeNodes(pod_template["spec"], refused_nodes);
  return PodTemplateObject(ObjectMetaFor(*identity), std::move(pod_template));
}

absl::StatusOr<nlohmann::json> ProvisioningRequestForPod(const nlohmann::json& pod) {
  absl::StatusOr<PodIdentity> identity = IdentityOf(pod);
  if (!identity.ok()) return identity.status();
  return ProvisioningRequestObject(ObjectMetaFor(*identity), 1);
}

std::string GangProvisioningObjectName(absl::string_view gang_id) {
  // A gang id ("<source>:<namespace>/<name>[/<replica>]") may hold characters a DNS subdomain may not
  // (label values allow '_' and capitals): each becomes '-' ('.' too, so no part of the name starts or
  // ends with '-'), and the hash of the whole id keeps two ids that map alike apart.
  std::string readable;
  for (const char c : gang_id) {
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      readable.push_back(c);
    } else if (c >= 'A' && c <= 'Z') {
      readable.push_back(static_cast<char>(c - 'A' + 'a'));
    } else {
      readable.push_back('-');
    }
  }
  const std::string suffix = absl::StrFormat("-%016x", Fnv1a64(gang_id));
  std::string name = absl::StrCat("topofit-gang-", readable);
  name.resize(std::min(name.size(), kMaxNameLength - suffix.size()));
  while (!name.empty() && (name.back() == '-' || name.back() == '.')) name.pop_back();
  return absl::StrCat(name, suffix);
}

namespace {

// A gang's template from `member`, named `name`: the gang's annotations kept, confined to `domain`, and
// with the member's own claims when `claims` says them (ClaimsByNameOf), else none.
absl::StatusOr<nlohmann::json> GangTemplate(const nlohmann::json& member, const std::string& name,
                                            const kube::NodeSelectorTerm& domain, const nlohmann::json* claims) {
  absl::StatusOr<PodIdentity> identity = IdentityOf(member);
  if (!identity.ok()) return identity.status();
  nlohmann::json pod_template =
      TemplateOf(member, *identity,
                 {kube::kMinLinkAnnotation, kube::kMinBandwidthAnnotation, kube::kTopologyPolicyAnnotation,
                  kube::kGangAnnotation, kube::kGangSizeAnnotation, kube::kGangRequiredTopologyAnnotation,
                  kube::kGangPreferredTopologyAnnotation, kube::kKueuePodGroupTotalCountAnnotation,
                  kube::kKueueRequiredTopologyAnnotation, kube::kKueuePreferredTopologyAnnotation,
                  kube::kLwsSizeAnnotation, kube::kKaiRequiredPlacementAnnotation,
                  kube::kKaiPreferredPlacementAnnotation});
  if (claims != nullptr && !claims->empty()) GiveClaims(pod_template["spec"], member["spec"], *claims);
  ConfineToShapes(pod_template["spec"], {domain});
  return PodTemplateObject(OwnedObjectMeta(*identity, name), std::move(pod_template));
}

}  // namespace

absl::StatusOr<nlohmann::json> PodTemplateForGang(const nlohmann::json& member, absl::string_view gang_id,
                                                  const kube::NodeSelectorTerm& domain) {
  return GangTemplate(member, GangProvisioningObjectName(gang_id), domain, nullptr);
}

std::string GangMemberTemplateName(absl::string_view gang_id, int index) {
  return GangProvisioningObjectName(absl::StrCat(gang_id, "/member-", index));
}

absl::StatusOr<nlohmann::json> PodTemplateForGangMember(const nlohmann::json& member, absl::string_view gang_id,
                                                        int index, const kube::NodeSelectorTerm& domain) {
  absl::StatusOr<nlohmann::json> claims = ClaimsByNameOf(member);
  if (!claims.ok()) return claims.status();
  return GangTemplate(member, GangMemberTemplateName(gang_id, index), domain, &*claims);
}

absl::StatusOr<nlohmann::json> ProvisioningRequestForGangMembers(const nlohmann::json& owner, absl::string_view gang_id,
                                                                 int members) {
  absl::StatusOr<PodIdentity> identity = IdentityOf(owner);
  if (!identity.ok()) return identity.status();
  if (members < 1 || members > scheduler::kMostClaimMembers) {
    return absl::InvalidArgumentError(absl::StrCat("gang ", gang_id, ": a request holds 1 to ",
                                                   scheduler::kMostClaimMembers,
                                                   " pod sets, one per member; asked for ", members));
  }
  nlohmann::json pod_sets = nlohmann::json::array();
  for (int i = 0; i < members; ++i) pod_sets.push_back(PodSet(GangMemberTemplateName(gang_id, i), 1));
  return ProvisioningRequestObject(GangObjectMeta(*identity, gang_id), std::move(pod_sets));
}

absl::StatusOr<nlohmann::json> ProvisioningRequestForGang(const nlohmann::json& member, absl::string_view gang_id,
                                                          int count) {
  absl::StatusOr<PodIdentity> identity = IdentityOf(member);
  if (!identity.ok()) return identity.status();
  if (count < 1) return absl::InvalidArgumentError(absl::StrCat("gang ", gang_id, ": a request needs a count >= 1"));
  return ProvisioningRequestObject(GangObjectMeta(*identity, gang_id), count);
}

ProvisioningState ProvisioningStateOf(const nlohmann::json& provisioning_request) {
  ProvisioningState state;
  if (!provisioning_request.is_object() || !provisioning_request.contains("status")) return state;
  const nlohmann::json& status = provisioning_request["status"];
  if (!status.is_object() || !status.contains("conditions") || !status["conditions"].is_array()) return state;
  std::string failed_message;
  for (const nlohmann::json& condition : status["conditions"]) {
    const std::string type = StringAt(condition, "type");
    if (type == "Provisioned" && StringAt(condition, "status") == "False" &&
        StringAt(condition, "reason") == "CapacityIsNotFound") {
      state.capacity_not_found = true;
    }
    if (StringAt(condition, "status") != "True") continue;
    if (type == "Provisioned") {
      state.provisioned = true;
      state.message = StringAt(condition, "message");
    } else if (type == "Failed") {
      state.failed = true;
      failed_message = StringAt(condition, "message");
    } else if (type == "BookingExpired") {
      state.booking_expired = true;
    } else if (type == "CapacityRevoked") {
      state.capacity_revoked = true;
    }
  }
  if (!state.provisioned) state.message = failed_message;
  return state;
}

}  // namespace topofit::kubeclient
