#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "topology/gpu_set.h"
#include "topology/link.h"
#include "topology/set_quality.h"
#include "topology/topology.h"

namespace topofit::topology {

// What a pod asks of its GPU set (README.md, "Pod annotations").
struct AllocationRequest {
  int gpus = 1;
  LinkClass min_link = LinkClass::kSys;  // weakest link allowed between any two chosen GPUs
  int64_t min_bandwidth_mbps = 0;        // lowest acceptable estimated collective bandwidth
  // GPUs the set must include (the kubelet's must-include devices, reused from an init container); they
  // must be free. The rest of the set is chosen by the same objective.
  GpuSet required{};
};

// Whether a set of quality `quality` meets the request's min-link and min-bandwidth.
constexpr bool MeetsLinkAndBandwidth(const SetQuality& quality, const AllocationRequest& request) {
  return IsAtLeast(quality.weakest, request.min_link) && quality.bandwidth_mbps >= request.min_bandwidth_mbps;
}

// A chosen set of GPUs and what it leaves free.
struct Allocation {
  GpuSet gpus;
  SetQuality quality;
  GpuSet leftover;             // the free GPUs the allocation leaves
  int64_t leftover_cohesion;   // SetQualityTable::Cohesion(leftover)
  friend bool operator==(const Allocation&, const Allocation&) = default;
};

// Why a node cannot give a request its GPUs: one entry per unmet part of the request, with what was asked
// and the best the node's free GPUs can reach. An empty list means the request fits.
// What fell short, as quantities (text is made only when shown, by Explain): GPUs requested and free
// (kGpuCount), the LinkClass asked and the best reachable one (kMinLink, as integers of LinkClass), or
// bandwidth asked and best reachable in MB/s (kMinBandwidth).
struct Insufficiency {
  enum class Kind : uint8_t { kGpuCount, kMinLink, kMinBandwidth };
  Kind kind;
  int64_t requested;
  int64_t available;
  friend bool operator==(const Insufficiency&, const Insufficiency&) = default;
};

struct FitResult {
  std::optional<Allocation> chosen;           // the best set that meets the request
  std::optional<Allocation> best_reachable;   // the best set of that size ignoring constraints
  std::vector<Insufficiency> insufficient;    // empty exactly when `chosen` is set
  bool fits() const { return chosen.has_value(); }
};

// The objective, in order: highest estimated bandwidth, then best weakest link, then the most cohesive
// leftover (least fragmentation), then the lexicographically smallest GPU ids. Exhaustive over the
// C(free, k) candidate sets with O(1) table reads each: optimal by construction, and fast for <= 16 GPUs.
//
// Errors (InvalidArgument): k <= 0, k larger than the node, `free` naming GPUs the node does not have,
// `required` not all free or larger than k.
// A node with too few free GPUs, or none meeting the constraints, is not an error: the result says why.
absl::StatusOr<FitResult> Fit(const Topology& topology, GpuSet free, const AllocationRequest& request);

// Fit, with "does not fit" turned into an error (ResourceExhausted for too few free GPUs,
// FailedPrecondition for unmet constraints) that names the best reachable set and why it falls short.
absl::StatusOr<Allocation> Allocate(const Topology& topology, GpuSet free, const AllocationRequest& request);

// Whether the request fits on an empty node of this shape (a node-group template).
absl::StatusOr<FitResult> FitEmptyNode(const Topology& topology, const AllocationRequest& request);

// "0,1: 50GB/s, weakest link PHB": a set and what it is worth.
std::string AllocationText(const Allocation& allocation);

// "needs links of NV or better, best reachable is PHB": one unmet part of a request, in the words every
// refusal (FailedNodes, explain, the topo command) tells it by.
std::string ShortfallText(const Insufficiency& shortfall);

// "needs links of NV or better, best reachable is PHB (best set 0,1: 50GB/s, weakest link PHB)": each
// shortfall and the best set, one line for logs and errors.
std::string Explain(const FitResult& result);

// "200GB/s", "12.5GB/s": bandwidth as users write it in `topofit.io/min-bandwidth`.
std::string FormatBandwidth(int64_t mbps);
// Parses "200GB/s", "200 GB/s", "200G", "1.5TB/s", "800MB/s"; fails otherwise.
absl::StatusOr<int64_t> ParseBandwidth(absl::string_view text);

}  // namespace topofit::topology
