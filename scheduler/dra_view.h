#pragma once

// What the extender reads of Dynamic Resource Allocation to judge a pod whose GPUs come from
// ResourceClaims (decision/claim_demand.h, decision/claim_fit.h): the claims the watches hold, allocated or
// not (a pending pod's claims are not allocated yet), and each node's GPUs as its ResourceSlices publish
// them. kubeclient::GpuStateSync is the one in a cluster; tests may hand it a fake. Thread-safe.

#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "decision/claim_demand.h"
#include "decision/claim_fit.h"
#include "kube/dra_objects.h"

namespace topofit::scheduler {

class DraView {
 public:
  virtual ~DraView() = default;
  // The claim of that namespace and name as last seen; nullopt when none is known.
  virtual std::optional<kube::ResourceClaim> Claim(absl::string_view namespace_name, absl::string_view name) const = 0;
  // The node's whole GPUs of the GPU driver, by index; empty when no slice of the node is known.
  virtual std::vector<decision::SliceGpu> NodeGpus(absl::string_view node) const = 0;
  // Which requests ask for GPUs.
  virtual const decision::DraGpuClasses& gpu_classes() const = 0;
};

}  // namespace topofit::scheduler
