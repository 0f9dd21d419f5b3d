#pragma once

// Live state: the extender's GpuState fed from watches of nodes and pods (issue 6).
//
//   node ADDED/MODIFIED, or in a node sync      -> GpuState::UpsertNode
//   node DELETED, or missing from a node sync   -> GpuState::RemoveNode (only nodes this feed learned)
//   pod holding GPUs (below), event or sync     -> GpuState::ObservePod(uid, node, count, ids)
//   pod DELETED or finished                     -> GpuState::Forget
//   pod missing from a pod sync, or no longer holding GPUs -> GpuState::Forget (only pods this feed observed)
//
// A pod holds GPUs when it is bound (spec.nodeName), not finished (phase neither Succeeded nor Failed; a
// terminating pod still holds them) and requests GPUs (kube::GpuRequest, the effective request). Its ids
// come from `topofit.io/gpu-ids` when present; an annotation that does not parse against the node's
// topology, or names a different number of GPUs than the request, is ignored and logged: the pod is then
// observed by count only, placed pessimistically.
//
// The two watches run on threads of their own, so a pod may arrive before its node: it is remembered and
// observed once the node is known (ObservePod needs the node's topology). A pod topofit Assumed at bind
// and then reported by the API on the same node, with the same ids or none, stays as assumed
// (GpuState::ObservePod is idempotent for it). A pod the extender Assumed but that this feed has never
// seen is left alone by a resync: its Binding may still be on the way to the watch.
//
// With Dynamic Resource Allocation (--dra), two more watches feed it:
//
//   ResourceSlice, event or sync  -> which GPU each device of NVIDIA's driver is (decision/claim_gpus.h)
//   ResourceClaim allocated       -> GpuState::ObservePod("resourceclaim:<uid>", node, count, ids)
//   ResourceClaim deallocated, DELETED, or missing from a claim sync -> GpuState::Forget of the same
//
// Every claim the watch sees, allocated or not, is kept too, with each node's GPUs as its slices publish them:
// the extender reads a pending pod's claims through them (scheduler::DraView, docs/dra.md).
//
// A claim holds its GPUs for every pod it is reserved for, so it is observed once, as a holder of its own:
// a pod whose GPUs come from a claim requests no `nvidia.com/gpu` and is not observed itself. Nor, while its
// claim holds them, is a pod that requests `nvidia.com/gpu` on a node whose GPUs DRA serves instead of the
// device plugin (KEP-5004: kube-scheduler makes it a claim and names it in the pod's
// status.extendedResourceClaimStatus): until that claim is seen holding them, the pod holds its count, so its
// GPUs are counted once, never none. A claim whose
// devices no known slice identifies yet is observed by count (placed pessimistically) and placed once its
// slices arrive.
//
// Thread-safe: the handlers may be called from the watchers' threads at once.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "absl/synchronization/mutex.h"
#include "decision/claim_gpus.h"
#include "kube/dra_objects.h"
#include "kube/objects.h"
#include "kubeclient/claim_cache.h"
#include "kubeclient/list_watcher.h"
#include "scheduler/dra_view.h"
#include "scheduler/gpu_state.h"

namespace topofit::kubeclient {

struct GpuStateSyncStats {
  int64_t node_syncs = 0;
  int64_t pod_syncs = 0;
  int64_t nodes_rejected = 0;     // UpsertNode failed (topology unresolvable)
  int64_t pods_observed = 0;      // ObservePod calls that succeeded
  int64_t pods_rejected = 0;      // ObservePod calls that failed for another reason than an unknown node
  int64_t pods_forgotten = 0;     // Forget calls that released something
  int64_t bad_gpu_ids = 0;        // `topofit.io/gpu-ids` ignored: unparsable, or the wrong count
  int64_t bad_gpu_requests = 0;   // pods whose GPU request could not be read (not tracked)
  int64_t claims_holding_gpus = 0;  // allocated claims holding GPUs, tracked now
};

using scheduler::ClaimHolderUid;

class GpuStateSync : public scheduler::DraView {
 public:
  // `state` and `log` must outlive this object and the watchers its handlers are given to. `gpu_classes`:
  // which driver's slices are GPUs, and which claim requests ask for them.
  GpuStateSync(scheduler::GpuState& state, spdlog::logger& log, decision::DraGpuClasses gpu_classes = {})
      : state_(state), log_(log), gpu_classes_(std::move(gpu_classes)), devices_(gpu_classes_.driver) {}
  GpuStateSync(const GpuStateSync&) = delete;
  GpuStateSync& operator=(const GpuStateSync&) = delete;

  // For ListWatcher::ForNodes and ListWatcher::ForPods. The pod watch may be narrowed to bound pods with
  // the field selector "spec.nodeName!=" (the handler ignores unbound pods anyway).
  WatchHandler<kube::Node> NodeHandler();
  WatchHandler<kube::Pod> PodHandler();

  // The same, callable directly.
  void SyncNodes(const std::vector<kube::Node>& nodes);
  void NodeChanged(WatchEventType type, const kube::Node& node);
  void SyncPods(const std::vector<kube::Pod>& pods);
  void PodChanged(WatchEventType type, const kube::Pod& pod);

  // For ListWatcher::ForResourceSlices and ListWatcher::ForResourceClaims.
  WatchHandler<kube::ResourceSlice> SliceHandler();
  WatchHandler<kube::ResourceClaim> ClaimHandler();
  void SyncSlices(const std::vector<kube::ResourceSlice>& slices);
  void SliceChanged(WatchEventType type, const kube::ResourceSlice& slice);
  void SyncClaims(const std::vector<kube::ResourceClaim>& claims);
  void ClaimChanged(WatchEventType type, const kube::ResourceClaim& claim);

  GpuStateSyncStats stats() const;

  // scheduler::DraView.
  std::optional<kube::ResourceClaim> Claim(absl::string_view namespace_name, absl::string_view name) const override;
  std::vector<decision::SliceGpu> NodeGpus(absl::string_view node) const override;
  const decision::DraGpuClasses& gpu_classes() const override { return gpu_classes_; }

 private:
  // What a pod holds according to the API.
  struct Holding {
    scheduler::PodRef pod;
    std::string node;
    int gpus = 0;
    bool has_ids = false;
    std::string ids;       // the annotation's text, parsed when the node is known
    std::string gpus_claim;  // a pod's: the claim DRA serves its nvidia.com/gpu through (kube::GpuExtendedResourceClaim)
    bool applied = false;  // ObservePod succeeded with this holding (false while its node is unknown)
    bool same_as(const Holding& other) const {
      return node == other.node && gpus == other.gpus && has_ids == other.has_ids && ids == other.ids &&
             gpus_claim == other.gpus_claim;
    }
  };

  // The pod's holding, or nullopt when it holds no GPUs.
  std::optional<Holding> HoldingOf(const kube::Pod& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpsertNodeLocked(const kube::Node& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveNodeLocked(const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void UpdatePodLocked(const kube::Pod& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ForgetPodLocked(const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Apply(Holding& holding) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A pod's holding applied, or, while the claim DRA serves its GPUs through holds them, released.
  void ApplyPodLocked(Holding& holding) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool ClaimHoldsGpusOfLocked(const Holding& pod) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The pods `claim` is reserved for whose GPUs it serves, applied again: released once it holds them,
  // holding their count again once it does not.
  void ReapplyPodsServedByLocked(const kube::ResourceClaim& claim) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The node as the state models it: where neither nvidia.com/gpu nor GPU feature discovery's count label
  // says how many GPUs it has, its slices do (the count label set from them).
  kube::Node CountedBySlicesLocked(const kube::Node& node) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Tells the state how many whole GPUs the node's slices publish now, when that changed; a node refused
  // for want of a GPU count is upserted again.
  void OfferSliceGpusLocked(const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Tracks an allocated claim (forgets one that is not) and applies its holding.
  void ResolveClaimLocked(const kube::ResourceClaim& claim) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies every tracked claim's holding again: the slices were relisted.
  void ResolveClaimsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies again the holding of the claims with devices in `pools`: a claim resolves from the slices of
  // its devices' pools alone, so a slice event leaves every other claim as it was.
  void ResolveClaimsOfPoolsLocked(const std::set<std::string>& pools) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The claim's holding from the slices known now, applied when it changed; released when it holds none.
  void ApplyClaimLocked(const kube::ResourceClaim& claim) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ForgetClaimLocked(const std::string& claim_uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Keeps claims_by_pool_ in step with claims_: a claim is indexed under its pools when tracked, and
  // taken out of them before it is replaced or dropped.
  void IndexClaimPoolsLocked(const kube::ResourceClaim& claim, bool tracked) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  scheduler::GpuState& state_;
  spdlog::logger& log_;
  const decision::DraGpuClasses gpu_classes_;
  mutable absl::Mutex mu_;
  std::set<std::string, std::less<>> nodes_ ABSL_GUARDED_BY(mu_);         // learned from the node watch
  std::map<std::string, Holding, std::less<>> pods_ ABSL_GUARDED_BY(mu_);  // by uid
  decision::DeviceGpuIndex devices_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, kube::ResourceClaim, std::less<>> claims_ ABSL_GUARDED_BY(mu_);  // allocated, by uid
  ClaimCache every_claim_;  // allocated or not
  std::map<std::string, int, std::less<>> offered_ ABSL_GUARDED_BY(mu_);  // GPUs the state was told each node's slices publish
  // Nodes the state refused with no GPU count and no slice yet, by name: upserted again when a slice comes.
  std::map<std::string, kube::Node, std::less<>> uncounted_ ABSL_GUARDED_BY(mu_);
  // The uids of the claims in claims_ with a device of the driver in each pool.
  std::map<std::string, std::set<std::string>, std::less<>> claims_by_pool_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Holding, std::less<>> claim_holdings_ ABSL_GUARDED_BY(mu_);    // by claim uid
  GpuStateSyncStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace topofit::kubeclient
