#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace topofit::decision {

// Why a node may not take a pod: a closed set, listed once here as (enumerator, code). Refusal expands it,
// and so does the decision history's Reason (history/record.h), so that a recorded refusal is the filter's
// own, named by the same code, without a copy kept in step by hand.
//   kNodeSize            the node has fewer GPUs than the pod wants
//   kGpuCount            too few free GPUs now
//   kMinLink             no free set meets the pod's required weakest link
//   kMinBandwidth        no free set meets the pod's required bandwidth
//   kHeldForScaleUp      the free GPUs are held for the pods a scale-up brought this node for (capacity_hold.h)
//   kWaitingForCapacity  the pod waits for the capacity scaled up for it, which gives it a better set
//                        (capacity_wait.h)
//   kAskingForCapacity   the pod asks for capacity that gives it a better set, and waits for it (capacity_wait.h)
#define TOPOFIT_NODE_REFUSALS(X)                   \
  X(kNodeSize, "node-size")                        \
  X(kGpuCount, "gpu-count")                        \
  X(kMinLink, "min-link")                          \
  X(kMinBandwidth, "min-bandwidth")                \
  X(kHeldForScaleUp, "held-for-scale-up")          \
  X(kWaitingForCapacity, "waiting-for-capacity")   \
  X(kAskingForCapacity, "asking-for-capacity")

#define TOPOFIT_REFUSAL_ENUMERATOR(enumerator, code) enumerator,

enum class Refusal : uint8_t {
  kNone,  // it may
  TOPOFIT_NODE_REFUSALS(TOPOFIT_REFUSAL_ENUMERATOR)
};

// "node-size", "gpu-count", ...; "" for kNone.
absl::string_view RefusalCode(Refusal refusal);

// What a refusal is told by: the quantities a NodeVerdict carries (FactsOf, filter.h) and the decision
// history records for each refused node, so that the scheduler's FailedNodes and `topofit explain` say
// one refusal in the same words.
struct RefusalFacts {
  Refusal refusal = Refusal::kNone;
  bool unresolvable = false;
  // What fell short and the best the node reaches: GPUs (kNodeSize: on the node; kGpuCount: free), a
  // topology::LinkClass (kMinLink) or MB/s (kMinBandwidth).
  int64_t requested = 0;
  int64_t available = 0;
  // kHeldForScaleUp: GPUs held for other pods against the node's free ones, and when the holds stop
  // refusing this pod.
  int held_gpus = 0;
  int free_gpus = 0;
  std::optional<absl::Time> held_until{};
};

// "needs links of NV or better, best reachable is PHB even when empty", "6 of its 8 free GPUs are held for
// the pods a scale-up brought it for; the pod is held back until 2026-12-04T10:00:00Z": what refused, without
// the node's name. Empty for kNone. `time_text` dates held_until (RFC 3339 unless told).
std::string Rfc3339Text(absl::Time time);
std::string RefusalText(const RefusalFacts& facts, absl::FunctionRef<std::string(absl::Time)> time_text = Rfc3339Text);

}  // namespace topofit::decision
