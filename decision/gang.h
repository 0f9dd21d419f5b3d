#pragma once

// Which gang a pod belongs to and what topology the gang wants, read from what users already write: the
// Workload API, Kueue, LeaderWorkerSet, JobSet and Job labels, KAI's and Kueue's topology annotations, and
// topofit's own annotations for anything else. A gang's pods are placed all or nothing. Pure: the pod's
// own fields only. The sources, their precedence and examples: docs/gangs.md.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "decision/nvlink_domain.h"
#include "kube/compute_domain.h"
#include "kube/objects.h"

namespace topofit::decision {

// Where a pod's gang came from, in precedence order: when a pod carries several, the first one listed
// here is its gang. Sources that also hold the pods back until the whole group can start (the Workload
// API's gang policy, Kueue's admission, LWS's group) come first, so topofit's gang is always the unit
// they gate; topofit's annotation then, and JobSet and Job only when the pod opts in with a size.
enum class GangSource {
  kPodGroup,         // spec.schedulingGroup.podGroupName (Kubernetes 1.36, scheduling.k8s.io v1alpha2)
  kWorkload,         // spec.workloadRef (Kubernetes 1.35, scheduling.k8s.io v1alpha1)
  kKueuePodGroup,    // kueue.x-k8s.io/pod-group-name
  kLeaderWorkerSet,  // leaderworkerset.sigs.k8s.io/group-key
  kTopofit,          // topofit.io/gang
  kComputeDomain,    // a ComputeDomain's channel claim template in spec.resourceClaims (compute_domain.h)
  kJobSet,           // jobset.sigs.k8s.io/jobset-name, with topofit.io/gang-size
  kJob,              // batch.kubernetes.io/job-name, with topofit.io/gang-size
};

// "pod-group", "workload", "kueue", "leaderworkerset", "topofit", "computedomain", "jobset", "job".
absl::string_view GangSourceName(GangSource source);

struct Gang {
  GangSource source = GangSource::kTopofit;
  // "<namespace>/<name>[/<replica>]", unique within its source: two pods are in one gang when source and
  // key are both equal. The name and replica by source: pod-group <podGroupName>; workload
  // <workload>/<podGroup>[/<podGroupReplicaKey>]; kueue <pod-group-name>; leaderworkerset
  // <set name>/<group-key>; topofit <topofit.io/gang>; computedomain <ComputeDomain name>; jobset
  // <name>[/<restart attempt>]; job <job-name>.
  std::string key;
  // How many pods must be placed together: the source's own count, else topofit.io/gang-size. nullopt when
  // neither says, as for the Workload API, whose count lives in the PodGroup object: the caller supplies it.
  std::optional<int> min_count;
  friend bool operator==(const Gang&, const Gang&) = default;
};

// "<source>:<key>": one string per gang, for maps and messages.
std::string GangIdOf(const Gang& gang);

// The pod's gang; nullopt when it is in none. `compute_domain`: the ComputeDomain the pod joins
// (compute_domain.h, ComputeDomainOf), null when none; its pods are a gang whose count is
// topofit.io/gang-size, else the domain's number of nodes (its pods take one node each). InvalidArgument
// naming the annotation and its value for a malformed count (not a whole number from 1 to
// kMaxAnnotatedCount, annotation_value.h), and for topofit.io/gang without topofit.io/gang-size
// (topofit's own gangs have no other place to say it).
absl::StatusOr<std::optional<Gang>> GangOf(const kube::Pod& pod, const kube::ComputeDomain* compute_domain = nullptr);

// What a gang's pods must share.
enum class GangLevel {
  kNode,    // one node
  kDomain,  // one multi-node NVLink domain (nvlink_domain.h)
};

// One topology constraint as an annotation gave it.
struct GangTopologyConstraint {
  std::string annotation;  // the annotation that said it
  std::string value;       // as written: a node label key, or topofit's "domain" / "node"
  // The level topofit keeps; nullopt when the value names a level topofit does not know (a rack or zone
  // label), and then `not_understood` says why, for the refusal or the log that reports it.
  std::optional<GangLevel> level;
  std::string not_understood;
  friend bool operator==(const GangTopologyConstraint&, const GangTopologyConstraint&) = default;
};

// The topology wanted, from one source: required (never split at that level) and preferred (kept when
// capacity allows), either or both; KAI allows both, a required level and a tighter preferred one.
struct GangTopology {
  std::optional<GangTopologyConstraint> required;
  std::optional<GangTopologyConstraint> preferred;
  friend bool operator==(const GangTopology&, const GangTopology&) = default;
};

// The topology the pod's gang wants, from the first source that says anything: topofit's annotations
// (topofit.io/gang-required-topology, -preferred-topology), then Kueue's (kueue.x-k8s.io/podset-required-
// topology, -preferred-topology), then KAI's (kai.scheduler/topology-required-placement,
// -preferred-placement); the sources after it are not read. A label key maps to kDomain when it is one of
// `domain_labels`, to kNode for kubernetes.io/hostname; topofit's annotations also take the words "domain"
// and "node". nullopt when no source says anything; InvalidArgument for an empty value.
absl::StatusOr<std::optional<GangTopology>> GangTopologyOf(const kube::Pod& pod,
                                                           const NvlinkDomainLabels& domain_labels);

}  // namespace topofit::decision
