#pragma once

#include <string>
#include <vector>

#include "kube/objects.h"
#include "scheduler/pod_ref.h"

namespace topofit::scheduler {

// Asks cluster-autoscaler for capacity a pending GPU pod can use when the existing nodes that could take it
// by count refused it for topology (or held GPUs): CA's own simulation counts GPUs only, would place the
// pod on those nodes, and so would never scale up for it. In a cluster: a ProvisioningRequest
// (kubeclient/provisioner.h). Implementations work in the background: the extender calls them on its
// filter and bind paths and must not wait on the API.
// Where the capacity asked for a pod may be: not on the nodes that refused it, and, when `shapes` is not
// empty, only on nodes of one of those shapes (decision/capacity_shapes.h: those that give the set it asks).
struct CapacityPlacement {
  std::vector<std::string> refused_nodes;
  std::vector<kube::NodeSelectorTerm> shapes;  // ORed; empty: any shape
};

// The most members of their own one request may name: a ProvisioningRequest holds at most 32 pod sets (the
// CRD's validation), one per such member.
inline constexpr int kMostClaimMembers = 32;

// A gang that no NVLink domain holds now (decision/gang_capacity_target.h): one request for all of it.
struct GangRef {
  std::string id;  // decision::GangIdOf
  std::string namespace_name;
};
struct GangCapacity {
  GangRef gang;
  PodRef member;  // the member asking: the request's pods copy its spec
  int count = 0;  // members to grow nodes for
  kube::NodeSelectorTerm domain;  // ANDed into the pods' node affinity: the domain's group and label
  // A gang of claim pods (GPUs from ResourceClaims): `count` members, each a pod set of its own whose
  // template names that member's claims (cluster-autoscaler makes no claim for a pod it imagines). Empty:
  // `count` pods copying `member`'s spec, without claims.
  std::vector<PodRef> claim_members;
};

class CapacityRequests {
 public:
  virtual ~CapacityRequests() = default;
  // The pod found no node; `where.refused_nodes` refused it. Once per pod until withdrawn: later calls for
  // a pod already asked for are no-ops.
  virtual void RequestFor(const PodRef& pod, const CapacityPlacement& where) = 0;
  // The pod was bound or is gone: its request has served, or is moot.
  virtual void Withdraw(const PodRef& pod) = 0;
  // A member of `capacity.gang` found no domain: the first call per gang (until withdrawn) asks for
  // `capacity.count` members at once; every call has its member consume that request, so that CA leaves
  // the gang's pods to it rather than grow nodes for them one by one.
  virtual void RequestForGang(const GangCapacity& capacity) = 0;
  // The gang landed, or a member went (the gang is torn down, or its next refusal asks again).
  virtual void WithdrawGang(const GangRef& gang) = 0;
};

}  // namespace topofit::scheduler
