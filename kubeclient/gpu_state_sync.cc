#include "kubeclient/gpu_state_sync.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "kube/pod_resources.h"
#include "decision/node_topology.h"
#include "decision/pod_demand.h"
#include "server/logging.h"
#include "topology/catalog.h"
#include "topology/gpu_set.h"

namespace topofit::kubeclient {
namespace {

bool Finished(const kube::Pod& pod) { return pod.status.phase == "Succeeded" || pod.status.phase == "Failed"; }

const std::string& KeyOf(const std::string& key) { return key; }
template <typename Value>
const std::string& KeyOf(const std::pair<const std::string, Value>& entry) {
  return entry.first;
}

// The keys of what this feed tracks (a set of names, or a map by name or uid) that a relist no longer has:
// they vanished while the watch was down. Collected first, since forgetting them changes `tracked`.
template <typename Tracked, typename Object, typename ListedKey>
std::vector<std::string> VanishedFrom(const Tracked& tracked, const std::vector<Object>& listed, ListedKey listed_key) {
  std::set<std::string, std::less<>> keys;
  for (const Object& object : listed) keys.insert(listed_key(object));
  std::vector<std::string> vanished;
  for (const auto& entry : tracked) {
    if (!keys.contains(KeyOf(entry))) vanished.push_back(KeyOf(entry));
  }
  return vanished;
}

}  // namespace

WatchHandler<kube::Node> GpuStateSync::NodeHandler() {
  return WatchHandlerOf(*this, &GpuStateSync::SyncNodes, &GpuStateSync::NodeChanged);
}

WatchHandler<kube::Pod> GpuStateSync::PodHandler() {
  return WatchHandlerOf(*this, &GpuStateSync::SyncPods, &GpuStateSync::PodChanged);
}

void GpuStateSync::SyncNodes(const std::vector<kube::Node>& nodes) {
  absl::MutexLock lock(&mu_);
  ++stats_.node_syncs;
  for (const std::string& name : VanishedFrom(nodes_, nodes, [](const kube::Node& node) { return node.metadata.name; })) {
    RemoveNodeLocked(name);
  }
  uncounted_.clear();  // the list brings back those still there
  for (const kube::Node& node : nodes) UpsertNodeLocked(node);
}

void GpuStateSync::NodeChanged(WatchEventType type, const kube::Node& node) {
  absl::MutexLock lock(&mu_);
  if (type == WatchEventType::kDeleted) {
    RemoveNodeLocked(node.metadata.name);
  } else {
    UpsertNodeLocked(node);
  }
}

void GpuStateSync::SyncPods(const std::vector<kube::Pod>& pods) {
  absl::MutexLock lock(&mu_);
  ++stats_.pod_syncs;
  for (const std::string& uid : VanishedFrom(pods_, pods, [](const kube::Pod& pod) { return pod.metadata.uid; })) {
    ForgetPodLocked(uid);
  }
  for (const kube::Pod& pod : pods) UpdatePodLocked(pod);
}

void GpuStateSync::PodChanged(WatchEventType type, const kube::Pod& pod) {
  absl::MutexLock lock(&mu_);
  if (type == WatchEventType::kDeleted) {
    ForgetPodLocked(pod.metadata.uid);
  } else {
    UpdatePodLocked(pod);
  }
}

WatchHandler<kube::ResourceSlice> GpuStateSync::SliceHandler() {
  return WatchHandlerOf(*this, &GpuStateSync::SyncSlices, &GpuStateSync::SliceChanged);
}

WatchHandler<kube::ResourceClaim> GpuStateSync::ClaimHandler() {
  return WatchHandlerOf(*this, &GpuStateSync::SyncClaims, &GpuStateSync::ClaimChanged);
}

void GpuStateSync::SyncSlices(const std::vector<kube::ResourceSlice>& slices) {
  absl::MutexLock lock(&mu_);
  devices_.Clear();
  std::set<std::string> nodes;
  for (const auto& [node, gpus] : offered_) nodes.insert(node);
  for (const kube::ResourceSlice& slice : slices) {
    devices_.Upsert(slice);
    nodes.insert(slice.node_name);
  }
  for (const std::string& node : nodes) OfferSliceGpusLocked(node);
  ResolveClaimsLocked();
}

void GpuStateSync::SliceChanged(WatchEventType type, const kube::ResourceSlice& slice) {
  absl::MutexLock lock(&mu_);
  ResolveClaimsOfPoolsLocked(type == WatchEventType::kDeleted ? devices_.Remove(slice.metadata.name)
                                                               : devices_.Upsert(slice));
  // A deletion carries the slice's last state: its node.
  OfferSliceGpusLocked(slice.node_name);
}

void GpuStateSync::OfferSliceGpusLocked(const std::string& node) {
  if (node.empty()) return;  // a slice of no single node
  const int gpus = static_cast<int>(devices_.GpusOfNode(node).size());
  auto [told, first] = offered_.try_emplace(node, gpus);
  if (!first && told->second == gpus) return;
  told->second = gpus;
  state_.OfferThroughDra(node, gpus);
  if (gpus == 0) {
    offered_.erase(told);
  } else if (auto waiting = uncounted_.find(node); waiting != uncounted_.end()) {
    const kube::Node counted = std::move(waiting->second);  // UpsertNodeLocked drops the entry
    UpsertNodeLocked(counted);
  }
}

void GpuStateSync::SyncClaims(const std::vector<kube::ResourceClaim>& claims) {
  absl::MutexLock lock(&mu_);
  for (const std::string& uid :
       VanishedFrom(claims_, claims, [](const kube::ResourceClaim& claim) { return claim.metadata.uid; })) {
    ForgetClaimLocked(uid);
  }
  every_claim_.Sync(claims);
  for (const kube::ResourceClaim& claim : claims) ResolveClaimLocked(claim);
}

void GpuStateSync::ClaimChanged(WatchEventType type, const kube::ResourceClaim& claim) {
  absl::MutexLock lock(&mu_);
  every_claim_.Changed(type, claim);
  if (type == WatchEventType::kDeleted) {
    ForgetClaimLocked(claim.metadata.uid);
  } else {
    ResolveClaimLocked(claim);
  }
}

GpuStateSyncStats GpuStateSync::stats() const {
  absl::MutexLock lock(&mu_);
  GpuStateSyncStats stats = stats_;
  stats.claims_holding_gpus = static_cast<int64_t>(claim_holdings_.size());
  return stats;
}

std::optional<kube::ResourceClaim> GpuStateSync::Claim(absl::string_view namespace_name, absl::string_view name) const {
  return every_claim_.Find(namespace_name, name);
}

std::vector<decision::SliceGpu> GpuStateSync::NodeGpus(absl::string_view node) const {
  absl::MutexLock lock(&mu_);
  return devices_.GpusOfNode(node);
}

std::optional<GpuStateSync::Holding> GpuStateSync::HoldingOf(const kube::Pod& pod) {
  if (pod.metadata.uid.empty() || pod.spec.node_name.empty() || Finished(pod)) return std::nullopt;
  const absl::StatusOr<int> gpus = kube::GpuRequest(pod);
  if (!gpus.ok()) {
    ++stats_.bad_gpu_requests;
    server::LogEvent(log_, "live_state_bad_gpu_request",
                     {{"pod", absl::StrCat(pod.metadata.namespace_name, "/", pod.metadata.name)},
                      {"error", std::string(gpus.status().message())}},
                     spdlog::level::warn);
    return std::nullopt;
  }
  if (*gpus <= 0) return std::nullopt;
  Holding holding;
  holding.pod = scheduler::PodRef{pod.metadata.uid, pod.metadata.namespace_name, pod.metadata.name};
  holding.node = pod.spec.node_name;
  holding.gpus = *gpus;
  if (auto it = pod.metadata.annotations.find(kube::kGpuIdsAnnotation);
      it != pod.metadata.annotations.end()) {
    holding.has_ids = true;
    holding.ids = it->second;
  }
  holding.gpus_claim = kube::GpuExtendedResourceClaim(pod);
  return holding;
}

kube::Node GpuStateSync::CountedBySlicesLocked(const kube::Node& node) const {
  auto offered = offered_.find(node.metadata.name);
  if (offered == offered_.end() || decision::AllocatableGpus(node) > 0 ||
      node.metadata.labels.contains(topology::kGpuCountLabel)) {
    return node;
  }
  kube::Node counted = node;
  counted.metadata.labels.insert_or_assign(std::string(topology::kGpuCountLabel), std::to_string(offered->second));
  return counted;
}

void GpuStateSync::UpsertNodeLocked(const kube::Node& node) {
  const std::string& name = node.metadata.name;
  uncounted_.erase(name);
  if (absl::Status upserted = state_.UpsertNode(CountedBySlicesLocked(node), scheduler::NodeSource::kWatch);
      !upserted.ok()) {
    // Nothing counted its GPUs yet (no nvidia.com/gpu, no count label): its slices may, once they come.
    if (decision::AllocatableGpus(node) == 0 && !offered_.contains(name)) uncounted_.insert_or_assign(name, node);
    ++stats_.nodes_rejected;
    server::LogEvent(log_, "live_state_node_rejected", {{"node", name}, {"error", std::string(upserted.message())}},
                     spdlog::level::warn);
    return;
  }
  nodes_.insert(name);
  // As are the GPUs its slices published before it arrived.
  if (auto offered = offered_.find(name); offered != offered_.end()) state_.OfferThroughDra(name, offered->second);
  // Claims and pods that arrived before their node (or while it was gone) are observed now; the claims
  // first, so a pod whose GPUs a claim holds finds it holding them.
  for (auto& [uid, holding] : claim_holdings_) {
    if (holding.node == name && !holding.applied) Apply(holding);
  }
  for (auto& [uid, holding] : pods_) {
    if (holding.node == name && !holding.applied) ApplyPodLocked(holding);
  }
}

void GpuStateSync::RemoveNodeLocked(const std::string& node) {
  uncounted_.erase(node);
  if (nodes_.erase(node) == 0) return;
  state_.RemoveNode(node);  // drops what its pods held; they are kept here, to be observed if it returns
  for (auto* holdings : {&pods_, &claim_holdings_}) {
    for (auto& [uid, holding] : *holdings) {
      if (holding.node == node) holding.applied = false;
    }
  }
}

void GpuStateSync::ResolveClaimLocked(const kube::ResourceClaim& claim) {
  const std::string& uid = claim.metadata.uid;
  if (uid.empty()) return;
  if (!claim.allocated) {
    ForgetClaimLocked(uid);
    return;
  }
  // Kept while allocated, even holding no GPU the slices known now identify: a slice may come later.
  if (auto known = claims_.find(uid); known != claims_.end()) IndexClaimPoolsLocked(known->second, /*tracked=*/false);
  const kube::ResourceClaim& tracked = claims_.insert_or_assign(uid, claim).first->second;
  IndexClaimPoolsLocked(tracked, /*tracked=*/true);
  ApplyClaimLocked(tracked);
}

void GpuStateSync::ResolveClaimsLocked() {
  for (const auto& [uid, claim] : claims_) ApplyClaimLocked(claim);
}

void GpuStateSync::ResolveClaimsOfPoolsLocked(const std::set<std::string>& pools) {
  std::set<std::string> uids;
  for (const std::string& pool : pools) {
    if (auto it = claims_by_pool_.find(pool); it != claims_by_pool_.end()) uids.insert(it->second.begin(), it->second.end());
  }
  for (const std::string& uid : uids) {
    if (auto it = claims_.find(uid); it != claims_.end()) ApplyClaimLocked(it->second);
  }
}

void GpuStateSync::IndexClaimPoolsLocked(const kube::ResourceClaim& claim, bool tracked) {
  const std::string& uid = claim.metadata.uid;
  for (const kube::AllocatedDevice& device : claim.devices) {
    if (device.driver != devices_.driver()) continue;
    if (tracked) {
      claims_by_pool_[device.pool].insert(uid);
    } else if (auto it = claims_by_pool_.find(device.pool); it != claims_by_pool_.end()) {
      it->second.erase(uid);
      if (it->second.empty()) claims_by_pool_.erase(it);
    }
  }
}

void GpuStateSync::ApplyClaimLocked(const kube::ResourceClaim& claim) {
  const std::string& uid = claim.metadata.uid;
  auto tracked = claim_holdings_.find(uid);
  const std::optional<decision::ClaimGpus> gpus = decision::GpusOfClaim(claim, devices_);
  if (!gpus) {
    if (tracked != claim_holdings_.end()) {
      if (state_.Forget(tracked->second.pod.uid)) ++stats_.pods_forgotten;
      claim_holdings_.erase(tracked);
      ReapplyPodsServedByLocked(claim);
    }
    return;
  }
  Holding holding;
  holding.pod = scheduler::PodRef{ClaimHolderUid(uid), claim.metadata.namespace_name, ClaimHolderUid(claim.metadata.name)};
  holding.node = gpus->node;
  holding.gpus = gpus->gpus();
  if (gpus->unresolved == 0) {
    holding.has_ids = true;
    holding.ids = absl::StrJoin(gpus->indices, ",");
  }
  if (tracked != claim_holdings_.end()) {
    if (tracked->second.applied && tracked->second.same_as(holding)) return;
    state_.Forget(tracked->second.pod.uid);  // moved, or placed now: observed anew
  }
  Apply(claim_holdings_.insert_or_assign(uid, std::move(holding)).first->second);
  ReapplyPodsServedByLocked(claim);
}

void GpuStateSync::ForgetClaimLocked(const std::string& claim_uid) {
  auto known = claims_.find(claim_uid);
  if (auto it = claim_holdings_.find(claim_uid); it != claim_holdings_.end()) {
    if (state_.Forget(it->second.pod.uid)) ++stats_.pods_forgotten;
    claim_holdings_.erase(it);
    if (known != claims_.end()) ReapplyPodsServedByLocked(known->second);
  }
  if (known != claims_.end()) {
    IndexClaimPoolsLocked(known->second, /*tracked=*/false);
    claims_.erase(known);
  }
}

bool GpuStateSync::ClaimHoldsGpusOfLocked(const Holding& pod) const {
  if (pod.gpus_claim.empty()) return false;
  const std::optional<kube::ResourceClaim> claim = every_claim_.Find(pod.pod.namespace_name, pod.gpus_claim);
  if (!claim) return false;
  auto held = claim_holdings_.find(claim->metadata.uid);
  return held != claim_holdings_.end() && held->second.applied;
}

void GpuStateSync::ReapplyPodsServedByLocked(const kube::ResourceClaim& claim) {
  for (const kube::ClaimConsumer& consumer : claim.reserved_for) {
    auto pod = pods_.find(consumer.uid);
    if (pod == pods_.end() || pod->second.gpus_claim != claim.metadata.name ||
        pod->second.pod.namespace_name != claim.metadata.namespace_name) {
      continue;
    }
    ApplyPodLocked(pod->second);
  }
}

void GpuStateSync::ApplyPodLocked(Holding& holding) {
  if (!ClaimHoldsGpusOfLocked(holding)) {
    Apply(holding);
    return;
  }
  // Released, with whatever the extender assumed for the pod at bind: the claim's devices are its GPUs.
  holding.applied = false;
  if (state_.Forget(holding.pod.uid)) ++stats_.pods_forgotten;
}

void GpuStateSync::UpdatePodLocked(const kube::Pod& pod) {
  const std::string& uid = pod.metadata.uid;
  std::optional<Holding> holding = HoldingOf(pod);
  if (!holding) {
    // A finished pod releases whatever it holds, even GPUs the extender assumed for it. A pod that is not
    // bound yet is left alone unless this feed saw it hold GPUs: the extender assumes before it annotates
    // and binds, so the annotation's MODIFIED arrives while the pod is still unbound.
    if (Finished(pod) || pods_.contains(uid)) ForgetPodLocked(uid);
    return;
  }
  auto it = pods_.find(uid);
  if (it != pods_.end() && it->second.applied && it->second.same_as(*holding)) return;  // nothing new
  Holding& tracked = pods_.insert_or_assign(uid, *std::move(holding)).first->second;
  ApplyPodLocked(tracked);
}

void GpuStateSync::ForgetPodLocked(const std::string& uid) {
  // Also for a pod never tracked here: a deleted or finished pod releases GPUs the extender assumed for
  // it even when the watch never saw it bound.
  pods_.erase(uid);
  if (!uid.empty() && state_.Forget(uid)) ++stats_.pods_forgotten;
}

void GpuStateSync::Apply(Holding& holding) {
  holding.applied = false;
  const std::shared_ptr<const decision::NodeGpuSnapshot> snapshot = state_.Snapshot(holding.node);
  if (snapshot == nullptr) return;  // observed when the node arrives
  std::optional<topology::GpuSet> ids;
  if (holding.has_ids) {
    absl::StatusOr<topology::GpuSet> parsed = topology::GpuSet::Parse(holding.ids, snapshot->topology->gpu_count());
    if (parsed.ok() && parsed->size() == holding.gpus) {
      ids = *parsed;
    } else {
      ++stats_.bad_gpu_ids;
      server::LogEvent(log_, "live_state_bad_gpu_ids",
                       {{"pod", holding.pod.key()},
                        {"node", holding.node},
                        {"gpu_ids", holding.ids},
                        {"gpus", holding.gpus},
                        {"error", parsed.ok() ? "count differs from the GPU request"
                                              : std::string(parsed.status().message())}},
                       spdlog::level::warn);
    }
  }
  const absl::Status observed = state_.ObservePod(holding.pod, holding.node, holding.gpus, ids);
  if (observed.ok()) {
    holding.applied = true;
    ++stats_.pods_observed;
    return;
  }
  if (absl::IsNotFound(observed)) return;  // the node went away meanwhile
  ++stats_.pods_rejected;
  server::LogEvent(log_, "live_state_pod_rejected",
                   {{"pod", holding.pod.key()}, {"node", holding.node}, {"error", std::string(observed.message())}},
                   spdlog::level::warn);
}

}  // namespace topofit::kubeclient
