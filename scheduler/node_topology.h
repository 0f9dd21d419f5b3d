#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "kube/objects.h"
#include "kube/topofit_annotations.h"
#include "topology/topology.h"

namespace topofit::scheduler {

using kube::kGpuTopologyAnnotation;

// Whole GPUs in the node's status.allocatable["nvidia.com/gpu"]; 0 when absent or not a whole count.
int AllocatableGpus(const kube::Node& node);

struct NodeTopology {
  std::shared_ptr<const topology::Topology> topology;
  std::string origin;  // "annotation", "catalog:dgx-a100", or "fallback: <why>"
};

// A node's GPU topology: its `topofit.io/gpu-topology` annotation, else the catalog shape its labels
// select, else the conservative PCIe-only fallback (topology/catalog.h). Topologies are cached by the
// inputs that decide them, so a fleet of identical nodes shares one (its per-subset tables are built
// once). Thread-safe.
class TopologyResolver {
 public:
  // InvalidArgument for an unparsable annotation or a node with no GPU count at all.
  absl::StatusOr<NodeTopology> Resolve(const kube::Node& node);

 private:
  // Distinct inputs seen are few (one per shape and annotation); past this bound the cache starts over
  // rather than grow without limit on a stream of unique annotations.
  static constexpr size_t kMaxEntries = 4096;
  std::mutex mu_;
  std::map<std::string, NodeTopology, std::less<>> cache_;
};

}  // namespace topofit::scheduler
