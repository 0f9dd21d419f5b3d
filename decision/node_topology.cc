#include "decision/node_topology.h"

#include "kube/quantity.h"
#include "kube/topofit_annotations.h"

namespace topofit::decision {

int AllocatableGpus(const kube::Node& node) {
  auto it = node.status.allocatable.find(kube::kResourceNvidiaGpu);
  if (it == node.status.allocatable.end()) return 0;
  absl::StatusOr<int64_t> count = kube::MilliToCount(it->second);
  // Far beyond any node; keeps a hostile value from reaching arithmetic.
  constexpr int64_t kMostGpus = 1 << 16;
  return count.ok() && *count > 0 && *count <= kMostGpus ? static_cast<int>(*count) : 0;
}

}  // namespace topofit::decision
