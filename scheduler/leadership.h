#pragma once

namespace topofit::scheduler {

// Whether this replica may write to the cluster (Bindings, ProvisioningRequests). With several replicas
// exactly one leads (kubeclient::LeaderElector holds a coordination.k8s.io Lease); the others still answer
// the read-only verbs but must not write. Thread-safe: asked from request threads.
class Leadership {
 public:
  virtual ~Leadership() = default;
  virtual bool IsLeader() const = 0;
};

// A single replica (no --leader-elect), and tests: always the leader.
class AlwaysLeader final : public Leadership {
 public:
  bool IsLeader() const override { return true; }
};

// The one AlwaysLeader the extender defaults to.
inline const Leadership& SoleReplica() {
  static const AlwaysLeader leader;
  return leader;
}

}  // namespace topofit::scheduler
