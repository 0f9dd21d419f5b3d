#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/strings/string_view.h"
#include "kube/objects.h"
#include "kube/topofit_annotations.h"
#include "topology/allocator.h"

namespace topofit::decision {

enum class TopologyPolicy {
  kPreferred,  // best available now (default)
  kRequired,   // never below min-link / min-bandwidth: wait for capacity instead
};

// What a pod asks of a node's GPUs.
struct GpuDemand {
  topology::AllocationRequest request;  // request.gpus is 0 for a pod without GPUs
  TopologyPolicy policy = TopologyPolicy::kPreferred;
  // kube::kExpectedRuntimeAnnotation; nullopt when the pod does not say.
  std::optional<absl::Duration> expected_runtime;
  bool wants_gpus() const { return request.gpus > 0; }
  // Whether min-link / min-bandwidth are binding: only under kRequired; kPreferred only ranks by them.
  bool constraints_required() const { return policy == TopologyPolicy::kRequired; }
  // A multi-GPU pod annotated with min-link or min-bandwidth (binding or only preferred): topology quality
  // is judged against that ask. Pods that ask nothing are served equally well by any set, so price and
  // packing decide for them.
  bool asks_for_topology() const {
    return request.gpus >= 2 && (request.min_link != topology::LinkClass::kSys || request.min_bandwidth_mbps > 0);
  }
};

// Reads the pod's whole-GPU request (Kubernetes' effective-request rules, kube/pod_resources.h) and its
// topofit.io annotations. InvalidArgument names the bad annotation and its value.
absl::StatusOr<GpuDemand> DemandOf(const kube::Pod& pod);

// `demand.request` without the constraints that its policy does not enforce.
topology::AllocationRequest EnforcedRequest(const GpuDemand& demand);

}  // namespace topofit::decision
