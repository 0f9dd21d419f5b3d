#pragma once

#include <map>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
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
  // A template decoded once is the same object in every call that names it (codec::NodeBytesCache), so
  // its answer is found by its address: no walk of its labels and annotations, which a call over 500
  // groups finds cold in memory (a cache miss per map node, 18% of ranking).
  absl::StatusOr<decision::NodeTopology> ResolveShared(const std::shared_ptr<const kube::Node>& node) override;

 private:
  // Distinct inputs seen are few (one per shape and annotation); past this bound the cache starts over
  // rather than grow without limit on a stream of unique annotations.
  static constexpr size_t kMaxEntries = 4096;
  std::mutex mu_;
  std::map<std::string, decision::NodeTopology, std::less<>> cache_;
  struct SharedEntry {
    std::shared_ptr<const kube::Node> node;  // held, so that no other node takes its address
    decision::NodeTopology topology;
  };
  absl::flat_hash_map<const kube::Node*, SharedEntry> by_object_;
};

}  // namespace topofit::codec
