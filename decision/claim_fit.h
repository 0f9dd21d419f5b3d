#pragma once

// Filter and prioritize for a pod whose GPUs come from ResourceClaims (claim_demand.h), with the topology
// scoring every GPU pod gets (filter.h, prioritize.h): the claims restrict which GPUs of the node may be
// taken, FilterNode chooses among them.
//
//   eligible   the node's GPUs (as its ResourceSlice publishes them) that meet every selector
//   groups     with matchAttribute: the eligible GPUs split by the attribute's value (a GPU without the
//              attribute is in none); without: one group, every eligible GPU
//   verdict    FilterNode in each group, the GPUs of the others counted as taken; of the groups that fit,
//              the one whose set is best by the allocator's own order (bandwidth, then weakest link), then
//              by PrioritizeScore, then the first by value. FilterNode's set is the best of its group
//              (topology/allocator.h), so the set chosen has the best quality of every set of free GPUs that
//              meets the claims. Its score sees what it leaves free on the whole node, not in its group.
//
// NVLink and the rest of the topology come from the node's own (the node agent's annotation, the catalog),
// as for every pod; the slices say only which GPU is which and its attributes.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "decision/claim_demand.h"
#include "decision/filter.h"
#include "decision/node_snapshot.h"
#include "decision/pod_demand.h"
#include "kube/dra_objects.h"

namespace topofit::decision {

struct ClaimNodeVerdict {
  NodeVerdict verdict;
  GpuDemand demand;    // what was judged: the annotations' topology ask, for the claims' number of GPUs
  std::string reason;  // a refusal's words ("topofit: ..."); empty when it fits
};

// `annotations`: the pod's own topofit.io ask (DemandOf), whose GPU count is replaced by the claims'.
// `gpus`: the node's GPUs of `classes.driver` (empty when no slice of the node is known).
ClaimNodeVerdict JudgeClaimsOnNode(const ClaimGpuDemand& claims, const GpuDemand& annotations,
                                   const std::vector<SliceGpu>& gpus, const NodeGpuSnapshot& node,
                                   absl::string_view driver = kNvidiaGpuDriver);

}  // namespace topofit::decision
