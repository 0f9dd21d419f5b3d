#include "decision/capacity_hold.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <functional>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "decision/node_group_identity.h"
#include "topology/catalog.h"

namespace topofit::decision {

namespace {

// Whether `pod` is one of the pods `pool`'s scale-ups were made for (held for or not).
bool IsMember(const CapacityHolds::Pool& pool, const JudgedPod& pod) {
  return std::find(pool.members.begin(), pool.members.end(), pod.uid) != pool.members.end();
}

// First-fit decreasing of `gpus` (sorted, largest first) over `free`, in order: what lands on each, and
// the GPUs of the pods that fit no node whole. Such a pod is still held on the node with most left, up to
// what it has (a node is grown whole, so its pod's GPUs are kept together as far as they go).
struct Packing {
  std::vector<int> on_node;
  int unplaced = 0;
};
Packing PackFirstFitDecreasing(const std::vector<int>& gpus, std::vector<int> free) {
  Packing packing{std::vector<int>(free.size(), 0), 0};
  for (int want : gpus) {
    if (free.empty()) {
      packing.unplaced += want;
      continue;
    }
    auto fit = std::find_if(free.begin(), free.end(), [want](int left) { return left >= want; });
    if (fit == free.end()) fit = std::max_element(free.begin(), free.end());
    const size_t i = static_cast<size_t>(fit - free.begin());
    const int take = std::min(want, free[i]);
    free[i] -= take;
    packing.on_node[i] += take;
    if (take < want) packing.unplaced += want;
  }
  return packing;
}

// The GPUs of the pending pods (but `except`), largest first.
std::vector<int> Descending(const std::map<std::string, CapacityHolds::Pool::HeldPod>& pending,
                            absl::string_view except = {}) {
  std::vector<int> gpus;
  for (const auto& [uid, pod] : pending) {
    if (uid != except) gpus.push_back(pod.gpus);
  }
  std::sort(gpus.begin(), gpus.end(), std::greater<>());
  return gpus;
}

// The best bandwidth of a set of n GPUs (index n) on nodes carrying `labels`; empty when they resolve to
// no topology.
std::vector<int64_t> BestBandwidths(const kube::StringMap& labels) {
  absl::StatusOr<topology::LabelledTopology> coming = topology::TopologyFromLabels(labels, 0);
  if (!coming.ok()) return {};
  std::vector<int64_t> best(coming->topology.gpu_count() + 1, 0);
  for (int n = 2; n < static_cast<int>(best.size()); ++n) best[n] = coming->topology.quality().BestBandwidth(n);
  return best;
}

}  // namespace

CapacityHolds::CapacityHolds(const std::vector<Intent>& intents, const std::vector<Preference>& preferences,
                             const std::vector<const NodeGpuSnapshot*>& nodes, const HoldContext& context)
    : context_(context) {
  std::map<absl::string_view, const Preference*> pending;
  for (const Preference& preference : preferences) pending.emplace(preference.pod_uid, &preference);
  // Nodes in creation order (then by name), each brought by at most one intent: the oldest that wants it.
  // Nodes older than every intent were brought by none (BroughtBy): they are left out before sorting.
  int64_t oldest_intent = std::numeric_limits<int64_t>::max();
  for (const Intent& intent : intents) oldest_intent = std::min(oldest_intent, absl::ToUnixSeconds(intent.recorded));
  std::vector<const NodeGpuSnapshot*> by_creation;
  for (const NodeGpuSnapshot* node : nodes) {
    if (node != nullptr && node->origin != nullptr && node->origin->created_seconds >= oldest_intent) {
      by_creation.push_back(node);
    }
  }
  std::sort(by_creation.begin(), by_creation.end(), [](const NodeGpuSnapshot* a, const NodeGpuSnapshot* b) {
    return std::tie(a->origin->created_seconds, a->node) < std::tie(b->origin->created_seconds, b->node);
  });
  std::vector<bool> taken(by_creation.size(), false);
  std::vector<const Intent*> oldest_first;
  for (const Intent& intent : intents) oldest_first.push_back(&intent);
  std::stable_sort(oldest_first.begin(), oldest_first.end(),
                   [](const Intent* a, const Intent* b) { return a->recorded < b->recorded; });
  struct Gathered {
    Pool pool;
    std::vector<const NodeGpuSnapshot*> brought;
    int node_count = 0;
    const kube::StringMap* labels = nullptr;
  };
  std::map<std::string, Gathered> groups;
  for (const Intent* intent_ptr : oldest_first) {
    const Intent& intent = *intent_ptr;
    Gathered& group = groups[intent.node_group];
    group.pool.node_group = intent.node_group;
    group.node_count += intent.node_count;
    group.labels = &intent.node_labels;
    int brought = 0;
    for (size_t i = 0; i < by_creation.size() && brought < intent.node_count; ++i) {
      if (taken[i] || !BroughtBy(intent, by_creation[i]->origin->labels, by_creation[i]->origin->created_seconds)) {
        continue;
      }
      taken[i] = true;
      group.brought.push_back(by_creation[i]);
      ++brought;
    }
    for (const std::string& uid : intent.pod_uids) {
      group.pool.members.push_back(uid);
      auto gpus = intent.pod_gpus.find(uid);
      if (gpus == intent.pod_gpus.end() || gpus->second <= 0) continue;  // not held for
      if (!group.pool.pending.emplace(uid, Pool::HeldPod{gpus->second, intent.recorded}).second) {
        continue;  // in an older intent too
      }
      auto preference = pending.find(uid);
      group.pool.pods.push_back(preference != pending.end() ? preference->second->pod_key : uid);
    }
  }
  for (auto& [name, group] : groups) {
    Pool& pool = group.pool;
    std::sort(group.brought.begin(), group.brought.end(), [](const NodeGpuSnapshot* a, const NodeGpuSnapshot* b) {
      return std::tie(a->origin->created_seconds, a->node) < std::tie(b->origin->created_seconds, b->node);
    });
    for (const NodeGpuSnapshot* node : group.brought) {
      pool.nodes.push_back(node->node);
      pool.free.push_back(node->free().size());
    }
    // Each node holds what the pods would take of it, not the pool's whole demand (free GPUs, so that a
    // pod that already landed is not held for again).
    Packing packing = PackFirstFitDecreasing(Descending(pool.pending), pool.free);
    pool.held = std::move(packing.on_node);
    pool.unplaced = packing.unplaced;
    const bool holds_gpus = std::any_of(pool.held.begin(), pool.held.end(), [](int gpus) { return gpus > 0; });
    const bool nodes_to_come = static_cast<int>(group.brought.size()) < group.node_count;
    // Kept while it holds GPUs on a node, or while its nodes are still to come: its pods may wait for them.
    if (!holds_gpus && (pool.pending.empty() || !nodes_to_come)) continue;
    if (context_.now) pool.coming_mbps = BestBandwidths(*group.labels);
    pools_.push_back(std::move(pool));
  }
}

CapacityHolds::PoolNode CapacityHolds::PoolOf(const NodeGpuSnapshot& node) const {
  if (node.origin == nullptr) return {};
  for (const Pool& pool : pools_) {
    auto it = std::find(pool.nodes.begin(), pool.nodes.end(), node.node);
    if (it != pool.nodes.end()) return {&pool, static_cast<size_t>(it - pool.nodes.begin())};
  }
  return {};
}

const CapacityHolds::Pool* CapacityHolds::HeldFor(absl::string_view pod_uid) const {
  for (const Pool& pool : pools_) {
    if (pool.pending.count(std::string(pod_uid)) > 0) return &pool;
  }
  return nullptr;
}

bool CapacityHolds::WaitsForCapacity(const GpuDemand& demand, absl::string_view pod_uid, const NodeVerdict& fitted,
                                     const NodeGpuSnapshot& node) const {
  if (!context_.now || !fitted.fits || !fitted.chosen || !demand.asks_for_topology() || demand.constraints_required()) {
    return false;
  }
  const Pool* pool = HeldFor(pod_uid);
  if (pool == nullptr || std::find(pool->nodes.begin(), pool->nodes.end(), node.node) != pool->nodes.end()) {
    return false;
  }
  const int gpus = demand.request.gpus;
  const int64_t coming = gpus >= 0 && gpus < static_cast<int>(pool->coming_mbps.size()) ? pool->coming_mbps[gpus] : 0;
  const topology::SetQuality& here = fitted.chosen->quality;
  return WaitForComingCapacity(demand, here.bandwidth_mbps, topology::MeetsLinkAndBandwidth(here, demand.request),
                               coming, *context_.now - pool->pending.at(std::string(pod_uid)).scaled_up, context_.wait);
}

int CapacityHolds::HeldOn(const NodeGpuSnapshot& node) const {
  const PoolNode at = PoolOf(node);
  return at.pool == nullptr ? 0 : at.pool->held[at.index];
}

JudgedPod JudgedPod::Of(const kube::Pod& pod) {
  const int64_t created = pod.metadata.creation_timestamp_seconds;
  return {pod.metadata.uid, created > 0 ? std::optional(absl::FromUnixSeconds(created)) : std::nullopt};
}

bool CapacityHolds::MayTake(const JudgedPod& pod, const NodeGpuSnapshot& node, int gpus) const {
  const auto [pool, i] = PoolOf(node);
  if (pool == nullptr) return true;
  if (!IsMember(*pool, pod)) {
    const std::optional<absl::Time> late_from = LateFrom(pod);
    return (late_from && *context_.now > *late_from) || static_cast<int>(node.free().size()) - gpus >= pool->held[i];
  }
  // The pool's pods placed before, against the others after this one took its GPUs: no worse.
  std::vector<int> after = pool->free;
  after[i] -= std::min(gpus, after[i]);
  return PackFirstFitDecreasing(Descending(pool->pending, pod.uid), after).unplaced <= pool->unplaced;
}

std::optional<absl::Time> CapacityHolds::HeldBackUntil(const JudgedPod& pod, const NodeGpuSnapshot& node) const {
  const Pool* pool = PoolOf(node).pool;
  return pool != nullptr && !IsMember(*pool, pod) ? LateFrom(pod) : std::nullopt;
}

std::optional<absl::Time> CapacityHolds::LateFrom(const JudgedPod& pod) const {
  if (!context_.now || !pod.created) return std::nullopt;
  return *pod.created + kLateBoots * context_.wait.expected_boot;
}

std::string CapacityHolds::ReasonText(const JudgedPod& pod, const NodeVerdict& verdict,
                                      const NodeGpuSnapshot& node) const {
  std::string text = absl::StrCat("topofit: ", RefusalText(FactsOf(verdict)));
  if (verdict.refusal == Refusal::kWaitingForCapacity) {
    const Pool* pool = HeldFor(pod.uid);
    if (pool == nullptr) return text;
    const absl::Time scaled_up = pool->pending.at(std::string(pod.uid)).scaled_up;
    const absl::Duration ago = absl::Trunc(context_.now.value_or(scaled_up) - scaled_up, absl::Seconds(1));
    absl::StrAppend(&text, " (here at best ",
                    topology::LinkClassName(verdict.chosen ? verdict.chosen->quality.weakest : topology::LinkClass::kSys),
                    "; node group ", pool->node_group, " was scaled up for it ",
                    ago > absl::ZeroDuration() ? absl::StrCat(absl::FormatDuration(ago), " ago") : "just now",
                    "); it takes this node if they are not up ", absl::FormatDuration(context_.wait.max_wait),
                    " after the scale-up");
    return text;
  }
  if (verdict.held_until) {
    absl::StrAppend(&text, ", when it has been pending ", absl::FormatDuration(kLateBoots * context_.wait.expected_boot));
  }
  const Pool* pool = PoolOf(node).pool;
  if (pool != nullptr) {
    absl::StrAppend(&text, " (node group ", pool->node_group, " scaled up for ", absl::StrJoin(pool->pods, ", "), ")");
  }
  return text;
}

}  // namespace topofit::decision
