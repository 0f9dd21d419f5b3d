#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "kube/objects.h"
#include "topology/topology.h"

namespace topofit::decision {

// Whole GPUs in the node's status.allocatable["nvidia.com/gpu"]; 0 when absent, not a whole count, or
// beyond any node (a hostile value never reaches arithmetic).
int AllocatableGpus(const kube::Node& node);

struct NodeTopology {
  std::shared_ptr<const topology::Topology> topology;
  std::string origin;  // "annotation", "catalog:dgx-a100", or "fallback: <why>"
  // Why: the annotation's form (a JSON descriptor, or `nvidia-smi topo -m` output), which label picked the
  // catalog shape (the instance type, or the GPU product with its count), or why no shape was picked.
  std::string reason;
};

// Where a node's GPU topology comes from. Decisions about nodes that do not exist yet (a node group's
// template) ask it; its one implementation (codec::TopologyResolver) reads the node's annotation, which
// takes a JSON decoder the decision library does not link.
class TopologySource {
 public:
  virtual ~TopologySource() = default;
  // InvalidArgument for an unparsable annotation or a node with no GPU count at all.
  virtual absl::StatusOr<NodeTopology> Resolve(const kube::Node& node) = 0;
  // The same for a node shared across calls, as node-group templates are (kube::NodeTemplates): a source
  // may remember the answer by the object itself, which it then keeps alive.
  virtual absl::StatusOr<NodeTopology> ResolveShared(const std::shared_ptr<const kube::Node>& node) {
    return Resolve(*node);
  }
};

}  // namespace topofit::decision
