#pragma once

// The ledger as annotations on the pods it is about (docs/kubeclient.md, "The ledger in the API"; names in
// kube/topofit_annotations.h):
//
//   topofit.io/placement-preference  on a pending pod no node could serve:
//       {"refusedNodes": [...], "firstSeen": RFC 3339, "lastSeen": RFC 3339}
//   topofit.io/scale-up-intent       on each pod a scale-up was chosen for:
//       {"nodeGroup": "...", "nodeCount": N, "nodeLabels": {...}, "recorded": RFC 3339, "heldGpus": N}
//       (heldGpus: the GPUs the new capacity is held for this pod, decision::Intent::pod_gpus; absent: none)
//
// A preference annotation holds only what the pod's spec does not already say: the GPUs, min link and
// bandwidth, node selector and affinity are re-derived from the pod with decision::PreferenceFor, so
// the pod's demand has one encoding, its spec.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "kube/objects.h"
#include "ledger/ledger.h"

namespace topofit::kubeclient {

struct PreferenceAnnotation {
  std::vector<std::string> refused_nodes;
  absl::Time first_seen;
  absl::Time last_seen;
  bool operator==(const PreferenceAnnotation&) const = default;
};

// One pod's share of an intent: readers rebuild the Intent from the pods with the same (node_group,
// recorded).
struct IntentAnnotation {
  std::string node_group;
  int node_count = 0;
  kube::StringMap node_labels;
  absl::Time recorded;
  std::optional<int> held_gpus;
  bool operator==(const IntentAnnotation&) const = default;
};

// Times are written with their sub-second digits, so an entry read back is the entry written.
// RFC 3339 in UTC with "Z", as Kubernetes writes times, and as many fractional digits as needed.
std::string LedgerTimeText(absl::Time t);
std::string PreferenceAnnotationJson(const PreferenceAnnotation& annotation);
absl::StatusOr<PreferenceAnnotation> ParsePreferenceAnnotation(absl::string_view text);
std::string IntentAnnotationJson(const IntentAnnotation& annotation);
absl::StatusOr<IntentAnnotation> ParseIntentAnnotation(absl::string_view text);

PreferenceAnnotation PreferenceAnnotationOf(const decision::Preference& preference);
// The share of the intent's pod `uid`.
IntentAnnotation IntentAnnotationOf(const decision::Intent& intent, const std::string& uid);

// The pod's preference: PreferenceFor(pod, DemandOf(pod), refused) with the annotation's refused nodes
// and times; nullopt without the annotation; an error when the annotation or the pod's demand is invalid.
absl::StatusOr<std::optional<decision::Preference>> PreferenceOfPod(const kube::Pod& pod);
// The pod's intent annotation; nullopt without it; an error when it is invalid.
absl::StatusOr<std::optional<IntentAnnotation>> IntentOfPod(const kube::Pod& pod);

}  // namespace topofit::kubeclient
