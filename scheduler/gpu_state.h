#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kube/objects.h"
#include "decision/node_snapshot.h"
#include "scheduler/pod_ref.h"
#include "server/clock.h"
#include "topology/gpu_set.h"

namespace topofit::scheduler {

// Where a node was learned: from a request's Node object (anyone who reaches the extender can invent one),
// or from the API server's watch of nodes (--live-state).
enum class NodeSource : uint8_t { kRequest, kWatch };

// Which GPUs of which nodes are in use. Fed today by the extender's own calls (nodes from filter requests,
// GPUs assumed at bind) and by the admin endpoint (pod reports and deletions); a Kubernetes watch will
// feed the same methods later.
//
// Consistency: every mutation happens under one writer lock and rebuilds that node's snapshot, so a
// reader sees either the state before or after a change, never half of one. Assume() re-checks the GPUs
// against the current state under that lock, which is what keeps concurrent binds from sharing a GPU.
class GpuState {
 public:
  virtual ~GpuState() = default;

  // Learns a node or refreshes it (topology and allocatable GPUs). Cheap when the node's resourceVersion
  // has not changed. InvalidArgument when its topology cannot be resolved; ResourceExhausted for a new node
  // beyond GpuStateLimits::max_nodes when no node can make room. A node the watch brought stays watched.
  virtual absl::Status UpsertNode(const kube::Node& node, NodeSource source) = 0;
  absl::Status UpsertNode(const kube::Node& node) { return UpsertNode(node, NodeSource::kRequest); }
  virtual void RemoveNode(absl::string_view node) = 0;
  // The node's whole GPUs its ResourceSlices publish (Dynamic Resource Allocation, docs/dra.md): offered
  // to pods beside its allocatable nvidia.com/gpu, so that a node whose GPUs only NVIDIA's DRA driver
  // hands out does not look full. Kept until told otherwise (0 once its slices are gone); nothing for a
  // node not known, whose caller tells it again once it is.
  virtual void OfferThroughDra(absl::string_view node, int gpus) = 0;
  // True when the node is known at this non-empty resourceVersion, so that UpsertNode of it would change
  // nothing: a request may then skip decoding the node.
  virtual bool IsCurrent(absl::string_view node, absl::string_view resource_version) const = 0;

  // nullptr for a node never seen (or forgotten). Naming a node here or to UpsertNode counts as seeing it.
  virtual std::shared_ptr<const decision::NodeGpuSnapshot> Snapshot(absl::string_view node) const = 0;
  // Snapshot() of each of `nodes`, in their order, under one lock: a NodeNames request names thousands.
  virtual std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> SnapshotsOf(
      const std::vector<std::string>& nodes) const = 0;
  // Every node's snapshot, in no particular order.
  virtual std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> Snapshots() const = 0;

  // Records that `pod` holds `gpus` on `node`, which topofit chose. FailedPrecondition when any of them
  // is not free or the pod already holds other GPUs; NotFound for an unknown node. Idempotent for the
  // same pod, node and GPUs.
  virtual absl::Status Assume(const PodRef& pod, absl::string_view node, topology::GpuSet gpus) = 0;

  // Records a pod that holds GPUs on a node without topofit having placed it: with its GPU ids when it
  // carries them (`topofit.io/gpu-ids`), else only its count, placed pessimistically.
  virtual absl::Status ObservePod(const PodRef& pod, absl::string_view node, int gpus,
                                  std::optional<topology::GpuSet> ids) = 0;

  // Releases whatever the pod holds (it was deleted, or its bind failed). False when it held nothing.
  virtual bool Forget(absl::string_view pod_uid) = 0;

  // The node and GPUs a pod holds, if known.
  virtual std::optional<std::pair<std::string, topology::GpuSet>> AssignmentOf(absl::string_view pod_uid) const = 0;
};

// What the in-memory GPU state keeps (issue 15). Without a watch of nodes (--live-state) nodes are learnt
// only from filter requests, which anyone who reaches the extender can fill with made-up nodes.
struct GpuStateLimits {
  // A node nothing has named for this long and on which no pod is known to hold GPUs is forgotten: a
  // request naming it again brings it back as new. Nodes with pods stay, so a forgotten node loses nothing
  // its next Node object does not tell. Zero: never (a watch removes the nodes that go).
  absl::Duration forget_unseen_after = absl::ZeroDuration();
  // Nodes kept at most. Kubernetes supports 5,000 nodes; the expander accepts node counts up to 15,000.
  // A new node beyond this many makes room: the forgettable ones go, then the least recently named tenth
  // of the nodes learned from requests without pods topofit knows of (a flood of invented nodes pushes out
  // its own, and a real node a later request names is learnt again from its Node object). Nodes from the
  // watch and nodes holding pods never make room: a new node is refused when only they are left.
  size_t max_nodes = 15'000;
  // Called for each node forgotten, or evicted to make room, under the state's lock: they must not call
  // the state.
  std::function<void(const std::string& node)> on_forgotten;
  std::function<void(const std::string& node)> on_evicted;
};

// Forgets nothing (a watch feeds it), at most GpuStateLimits{}.max_nodes nodes, in no order of recency.
// The GpuState key of what a ResourceClaim holds (kubeclient::GpuStateSync observes an allocated claim's
// GPUs under it): never a pod's uid.
std::string ClaimHolderUid(absl::string_view claim_uid);

std::unique_ptr<GpuState> NewInMemoryGpuState();
// `clock` (which must outlive the state) tells when nodes were last seen.
std::unique_ptr<GpuState> NewInMemoryGpuState(const server::Clock& clock, GpuStateLimits limits);

}  // namespace topofit::scheduler
