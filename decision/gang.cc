#include "decision/gang.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "decision/annotation_value.h"
#include "kube/topofit_annotations.h"

namespace topofit::decision {
namespace {

constexpr absl::string_view kHostnameLabel = "kubernetes.io/hostname";

// The value of `key`, nullopt when absent or empty: the controllers that write these labels never leave
// one empty, and an empty name would put every such pod of a namespace in one gang.
std::optional<absl::string_view> NonEmpty(const kube::StringMap& map, absl::string_view key) {
  auto it = map.find(key);
  if (it == map.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

absl::StatusOr<std::optional<int>> CountAnnotation(const kube::StringMap& annotations, absl::string_view key) {
  auto it = annotations.find(key);
  if (it == annotations.end()) return std::nullopt;
  absl::StatusOr<int> count = ParseCountAnnotation(it->first, it->second);
  if (!count.ok()) return count.status();
  return *count;
}

std::string GangKey(const kube::Pod& pod, absl::string_view name, absl::string_view replica = "") {
  return replica.empty() ? absl::StrCat(pod.metadata.namespace_name, "/", name)
                         : absl::StrCat(pod.metadata.namespace_name, "/", name, "/", replica);
}

// A gang source's topology annotations.
struct TopologyAnnotations {
  absl::string_view required;
  absl::string_view preferred;
  bool takes_level_words;  // topofit's own also take "domain" and "node"
};

// In precedence order (gang.h, GangTopologyOf).
constexpr TopologyAnnotations kTopologySources[] = {
    {kube::kGangRequiredTopologyAnnotation, kube::kGangPreferredTopologyAnnotation, true},
    {kube::kKueueRequiredTopologyAnnotation, kube::kKueuePreferredTopologyAnnotation, false},
    {kube::kKaiRequiredPlacementAnnotation, kube::kKaiPreferredPlacementAnnotation, false},
};

absl::StatusOr<GangTopologyConstraint> Constraint(absl::string_view annotation, absl::string_view value,
                                                  bool takes_level_words, const NvlinkDomainLabels& domain_labels) {
  if (value.empty()) {
    return AnnotationError(annotation, value,
                           takes_level_words ? "expected domain, node or a node label key" : "expected a node label key");
  }
  GangTopologyConstraint constraint;
  constraint.annotation = std::string(annotation);
  constraint.value = std::string(value);
  if ((takes_level_words && value == "domain") || domain_labels.Contains(value)) {
    constraint.level = GangLevel::kDomain;
  } else if ((takes_level_words && value == "node") || value == kHostnameLabel) {
    constraint.level = GangLevel::kNode;
  } else {
    constraint.not_understood =
        absl::StrCat("topofit keeps a gang on one node (", kHostnameLabel, ") or in one NVLink domain (",
                     absl::StrJoin(domain_labels.keys(), ", "), "); ", value, " is neither");
  }
  return constraint;
}

}  // namespace

std::string GangIdOf(const Gang& gang) { return absl::StrCat(GangSourceName(gang.source), ":", gang.key); }

absl::string_view GangSourceName(GangSource source) {
  switch (source) {
    case GangSource::kPodGroup: return "pod-group";
    case GangSource::kWorkload: return "workload";
    case GangSource::kKueuePodGroup: return "kueue";
    case GangSource::kLeaderWorkerSet: return "leaderworkerset";
    case GangSource::kTopofit: return "topofit";
    case GangSource::kComputeDomain: return "computedomain";
    case GangSource::kJobSet: return "jobset";
    case GangSource::kJob: return "job";
  }
  return "unknown";
}

absl::StatusOr<std::optional<Gang>> GangOf(const kube::Pod& pod, const kube::ComputeDomain* compute_domain) {
  const kube::StringMap& labels = pod.metadata.labels;
  const kube::StringMap& annotations = pod.metadata.annotations;
  // Read whether or not a source below uses it: a malformed size is an error wherever it stands.
  absl::StatusOr<std::optional<int>> size = CountAnnotation(annotations, kube::kGangSizeAnnotation);
  if (!size.ok()) return size.status();
  auto gang = [&](GangSource source, std::string key, std::optional<int> own_count) {
    return Gang{.source = source, .key = std::move(key), .min_count = own_count ? own_count : *size};
  };

  if (const std::optional<kube::PodSchedulingGroup>& group = pod.spec.scheduling_group;
      group && !group->pod_group_name.empty()) {
    return gang(GangSource::kPodGroup, GangKey(pod, group->pod_group_name), std::nullopt);
  }
  if (const std::optional<kube::WorkloadReference>& ref = pod.spec.workload_ref; ref && !ref->name.empty()) {
    return gang(GangSource::kWorkload, GangKey(pod, absl::StrCat(ref->name, "/", ref->pod_group), ref->pod_group_replica_key),
                std::nullopt);
  }
  if (std::optional<absl::string_view> name = NonEmpty(labels, kube::kKueuePodGroupNameLabel)) {
    absl::StatusOr<std::optional<int>> total = CountAnnotation(annotations, kube::kKueuePodGroupTotalCountAnnotation);
    if (!total.ok()) return total.status();
    return gang(GangSource::kKueuePodGroup, GangKey(pod, *name), *total);
  }
  if (std::optional<absl::string_view> group_key = NonEmpty(labels, kube::kLwsGroupKeyLabel)) {
    absl::StatusOr<std::optional<int>> group_size = CountAnnotation(annotations, kube::kLwsSizeAnnotation);
    if (!group_size.ok()) return group_size.status();
    std::optional<absl::string_view> set = NonEmpty(labels, kube::kLwsNameLabel);
    return gang(GangSource::kLeaderWorkerSet, set ? GangKey(pod, *set, *group_key) : GangKey(pod, *group_key),
                *group_size);
  }
  if (auto it = annotations.find(kube::kGangAnnotation); it != annotations.end()) {
    if (it->second.empty()) return AnnotationError(it->first, it->second, "expected the gang's name");
    if (!*size) {
      return AnnotationError(it->first, it->second, absl::StrCat("needs ", kube::kGangSizeAnnotation, ", the gang's pod count"));
    }
    return gang(GangSource::kTopofit, GangKey(pod, it->second), std::nullopt);
  }
  if (compute_domain != nullptr) {
    return gang(GangSource::kComputeDomain, GangKey(pod, compute_domain->metadata.name),
                *size ? *size : compute_domain->num_nodes);
  }
  if (!*size) return std::nullopt;
  // JobSet and Job pods are gangs only when the user says how many pods start together: their pods carry
  // no count, and a Job's completions may run a few at a time.
  if (std::optional<absl::string_view> set = NonEmpty(labels, kube::kJobSetNameLabel)) {
    // A restarted JobSet recreates every pod: its new pods are a gang of their own, not joined by the old.
    std::optional<absl::string_view> attempt = NonEmpty(labels, kube::kJobSetRestartAttemptLabel);
    return gang(GangSource::kJobSet, GangKey(pod, *set, attempt.value_or("")), std::nullopt);
  }
  if (std::optional<absl::string_view> job = NonEmpty(labels, kube::kJobNameLabel)) {
    return gang(GangSource::kJob, GangKey(pod, *job), std::nullopt);
  }
  return AnnotationError(kube::kGangSizeAnnotation, annotations.find(kube::kGangSizeAnnotation)->second,
                         absl::StrCat("names no gang: add ", kube::kGangAnnotation,
                                      ", or set it on the pods of a JobSet, a Job or a ComputeDomain (read "
                                      "with --compute-domains)"));
}

absl::StatusOr<std::optional<GangTopology>> GangTopologyOf(const kube::Pod& pod,
                                                           const NvlinkDomainLabels& domain_labels) {
  const kube::StringMap& annotations = pod.metadata.annotations;
  for (const TopologyAnnotations& source : kTopologySources) {
    auto required = annotations.find(source.required);
    auto preferred = annotations.find(source.preferred);
    if (required == annotations.end() && preferred == annotations.end()) continue;
    GangTopology topology;
    if (required != annotations.end()) {
      absl::StatusOr<GangTopologyConstraint> c =
          Constraint(required->first, required->second, source.takes_level_words, domain_labels);
      if (!c.ok()) return c.status();
      topology.required = *std::move(c);
    }
    if (preferred != annotations.end()) {
      absl::StatusOr<GangTopologyConstraint> c =
          Constraint(preferred->first, preferred->second, source.takes_level_words, domain_labels);
      if (!c.ok()) return c.status();
      topology.preferred = *std::move(c);
    }
    return topology;
  }
  return std::nullopt;
}

}  // namespace topofit::decision
