#pragma once

#include <map>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "decision/node_topology.h"
#include "kube/objects.h"

namespace topofit::codec {

// A node's GPU topology: its `topofit.io/gpu-topology` annotation (topology_json.h), else the catalog
// shape its labels select, else the conservative PCIe-only fallback (topology/catalog.h). Topologies are
// cached by the inputs that decide them, so a fleet of identical nodes shares one (its per-subset tables
// are built once). Thread-safe.
class TopologyResolver final : public decision::TopologySource {
 public:
  absl::StatusOr<decision::NodeTopology> Resolve(const kube::Node& node) override;

 private:
  // Distinct inputs seen are few (one per shape and annotation); past this bound the cache starts over
  // rather than grow without limit on a stream of unique annotations.
  static constexpr size_t kMaxEntries = 4096;
  std::mutex mu_;
  std::map<std::string, decision::NodeTopology, std::less<>> cache_;
};

}  // namespace topofit::codec
