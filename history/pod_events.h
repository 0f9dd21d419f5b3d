#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "history/record.h"

namespace topofit::history {

// The moments of a pod's chain a person should see in `kubectl describe pod`, as Kubernetes Events
// (events.k8s.io/v1): the short form of a decision record. The words are DescribeRecord's, so an Event
// and `topofit explain` say the same thing.
enum class PodEventKind : uint8_t {
  kRefusedForTopology,  // Warning: every offered node refused the pod, some of them for its topology
  kCapacityRequested,   // a ProvisioningRequest was asked for the pod
  kCapacityHeld,        // a node group grows for the pod; the new node's GPUs are held for it
  kGpusAssigned,        // bound, with the GPU ids it holds
  kRestartDiagnosed,    // Warning: a container restarted, and why (GPU fault, out of memory, ...)
};

// The events.k8s.io/v1 fields: `reason` ("RefusedForTopology", ...), `action` ("Filter", "RequestCapacity",
// "HoldCapacity", "Bind", "DiagnoseRestart"), and whether the type is Warning (else Normal).
absl::string_view PodEventReason(PodEventKind kind);
absl::string_view PodEventAction(PodEventKind kind);
bool IsWarning(PodEventKind kind);

// The API server refuses a note longer than 1 KiB.
inline constexpr size_t kMaxEventNoteBytes = 1024;

struct PodEvent {
  PodEventKind kind = PodEventKind::kRefusedForTopology;
  std::string namespace_name{};
  std::string name{};
  std::string uid{};   // the pod's: a correlation id is the uid of the pod the ledger knows
  std::string note{};  // at most kMaxEventNoteBytes, cut on a UTF-8 character boundary
  friend bool operator==(const PodEvent&, const PodEvent&) = default;
};

// The Events a record gives: none for most (scores, preferences, rankings, withdrawals, refusals that are
// not about topology: kube-scheduler's own FailedScheduling tells those); one per pod of an intent.
// Pods named without "namespace/name" get none.
std::vector<PodEvent> PodEventsOf(const Record& record);

// Cuts `text` to at most `max_bytes`, never inside a UTF-8 character.
std::string TruncateUtf8(std::string text, size_t max_bytes);

}  // namespace topofit::history
