#include "decision/pod_demand.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "decision/annotation_value.h"
#include "kube/pod_resources.h"

namespace topofit::decision {

absl::StatusOr<GpuDemand> DemandOf(const kube::Pod& pod) {
  GpuDemand demand;
  absl::StatusOr<int> gpus = kube::GpuRequest(pod);
  if (!gpus.ok()) return gpus.status();
  demand.request.gpus = *gpus;
  const kube::StringMap& annotations = pod.metadata.annotations;
  if (auto it = annotations.find(kube::kMinLinkAnnotation); it != annotations.end()) {
    absl::StatusOr<topology::LinkClass> link = topology::ParseLinkClass(it->second);
    if (!link.ok() || *link == topology::LinkClass::kSelf) {
      return AnnotationError(it->first, it->second, "expected NV, PIX, PXB, PHB, NODE or SYS");
    }
    demand.request.min_link = *link;
  }
  if (auto it = annotations.find(kube::kMinBandwidthAnnotation); it != annotations.end()) {
    absl::StatusOr<int64_t> mbps = topology::ParseBandwidth(it->second);
    if (!mbps.ok()) return AnnotationError(it->first, it->second, mbps.status().message());
    demand.request.min_bandwidth_mbps = *mbps;
  }
  if (auto it = annotations.find(kube::kTopologyPolicyAnnotation); it != annotations.end()) {
    const std::string policy = absl::AsciiStrToLower(it->second);
    if (policy == "required") {
      demand.policy = TopologyPolicy::kRequired;
    } else if (policy != "preferred") {
      return AnnotationError(it->first, it->second, "expected required or preferred");
    }
  }
  if (auto it = annotations.find(kube::kExpectedRuntimeAnnotation); it != annotations.end()) {
    absl::Duration runtime;
    if (!absl::ParseDuration(it->second, &runtime) || runtime <= absl::ZeroDuration() ||
        runtime == absl::InfiniteDuration()) {
      return AnnotationError(it->first, it->second, "expected a positive duration such as 90m or 2h30m");
    }
    demand.expected_runtime = runtime;
  }
  return demand;
}

topology::AllocationRequest EnforcedRequest(const GpuDemand& demand) {
  if (demand.constraints_required()) return demand.request;
  return topology::AllocationRequest{.gpus = demand.request.gpus};
}

}  // namespace topofit::decision
