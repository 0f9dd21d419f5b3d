#include "scheduler/gpu_state.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codec/node_topology.h"
#include "scheduler/slot_name.h"
#include "scheduler/snapshot_keeper.h"
#include "topology/occupancy.h"

namespace topofit::scheduler {

std::string ClaimHolderUid(absl::string_view claim_uid) { return absl::StrCat("resourceclaim:", claim_uid); }
namespace {

using topology::GpuSet;

// A time in nanoseconds written under a reader lock, so atomic; copyable because a hash table's slots move
// when it grows, which happens under the writer lock alone.
class RelaxedNanos {
 public:
  RelaxedNanos() = default;
  RelaxedNanos(const RelaxedNanos& other) : nanos_(other.Load()) {}
  RelaxedNanos& operator=(const RelaxedNanos& other) {
    Store(other.Load());
    return *this;
  }
  int64_t Load() const { return nanos_.load(std::memory_order_relaxed); }
  void Store(int64_t nanos) const { nanos_.store(nanos, std::memory_order_relaxed); }

 private:
  mutable std::atomic<int64_t> nanos_{0};
};

// What one pod holds on one node.
struct Holding {
  std::optional<GpuSet> ids;  // unknown for pods reported by count only
  int count = 0;
  bool ours = false;          // topofit chose the ids
};

struct NodeRecord {
  std::string resource_version;
  decision::NodeTopology topology;
  std::shared_ptr<const decision::NodeOrigin> origin;
  bool ready = true;
  int allocatable = 0;   // nvidia.com/gpu
  int dra_offered = 0;   // GPUs its slices publish
  std::map<std::string, Holding, std::less<>> pods;  // by pod uid
  std::shared_ptr<const decision::NodeGpuSnapshot> snapshot;
  bool watched = false;  // learned from the watch at least once: never evicted for room
};

class InMemoryGpuState final : public GpuState {
 public:
  InMemoryGpuState(const server::Clock* clock, GpuStateLimits limits) : clock_(clock), limits_(std::move(limits)) {}

  absl::Status UpsertNode(const kube::Node& node, NodeSource source) override {
    const std::string& name = node.metadata.name;
    {
      std::shared_lock<std::shared_mutex> read(mu_);
      const IndexEntry* known = Find(name);
      if (known != nullptr && !node.metadata.resource_version.empty() &&
          known->record->resource_version == node.metadata.resource_version &&
          (known->record->watched || source == NodeSource::kRequest)) {
        Seen(*known);
        return absl::OkStatus();
      }
    }
    absl::StatusOr<decision::NodeTopology> resolved = resolver_.Resolve(node);  // outside the lock: may parse
    if (!resolved.ok()) return resolved.status();
    std::unique_lock<std::shared_mutex> write(mu_);
    if (!nodes_.contains(name)) {
      if (absl::Status room = MakeRoom(); !room.ok()) return room;
    }
    NodeRecord& record = nodes_[name];
    Seen(by_name_.try_emplace(SlotName(name), IndexEntry{&record, nullptr, {}}).first->second);
    record.watched = record.watched || source == NodeSource::kWatch;
    record.resource_version = node.metadata.resource_version;
    record.topology = *std::move(resolved);
    record.allocatable = decision::AllocatableGpus(node);
    record.ready = kube::NodeIsReady(node);
    record.origin = std::make_shared<const decision::NodeOrigin>(decision::NodeOrigin{node.metadata.labels,
                                                                  node.metadata.creation_timestamp_seconds});
    Rebuild(name, record);
    return absl::OkStatus();
  }

  bool IsCurrent(absl::string_view node, absl::string_view resource_version) const override {
    if (resource_version.empty()) return false;
    std::shared_lock<std::shared_mutex> read(mu_);
    const IndexEntry* known = Find(node);
    return known != nullptr && known->record->resource_version == resource_version;
  }

  void RemoveNode(absl::string_view node) override {
    std::unique_lock<std::shared_mutex> write(mu_);
    auto it = nodes_.find(node);
    if (it == nodes_.end()) return;
    for (const auto& [uid, holding] : it->second.pods) pod_node_.erase(uid);
    Erase(it);
  }

  void OfferThroughDra(absl::string_view node, int gpus) override {
    std::unique_lock<std::shared_mutex> write(mu_);
    auto it = nodes_.find(node);
    if (it == nodes_.end() || it->second.dra_offered == gpus) return;
    it->second.dra_offered = gpus;
    Rebuild(it->first, it->second);
  }

  std::shared_ptr<const decision::NodeGpuSnapshot> Snapshot(absl::string_view node) const override {
    std::shared_lock<std::shared_mutex> read(mu_);
    const IndexEntry* known = Find(node);
    if (known == nullptr) return nullptr;
    Seen(*known);
    return known->record->snapshot;
  }

  // Pointers aliased to one pin (snapshot_keeper.h), not copies of each snapshot's own count.
  std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> SnapshotsOf(
      const std::vector<std::string>& nodes) const override {
    std::vector<const decision::NodeGpuSnapshot*> found(nodes.size(), nullptr);
    std::shared_lock<std::shared_mutex> read(mu_);
    const std::shared_ptr<const void> pin = keeper_.Pin();
    const int64_t now = NowNanos();
    for (size_t i = 0; i < nodes.size(); ++i) {
      // The lookups are independent: asking for a later name's slot overlaps its cache miss with this one.
      if (i + decision::kPrefetchAhead < nodes.size()) by_name_.prefetch(nodes[i + decision::kPrefetchAhead]);
      auto it = by_name_.find(nodes[i]);
      if (it == by_name_.end()) continue;
      Seen(it->second, now);
      found[i] = it->second.snapshot;
    }
    // In a loop of its own: each pointer's count is a locked increment, which waits for every store before
    // it, and the stores above miss the cache.
    std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> out;
    out.reserve(nodes.size());
    for (const decision::NodeGpuSnapshot* snapshot : found) {
      if (snapshot == nullptr) out.emplace_back(); else out.emplace_back(pin, snapshot);
    }
    return out;
  }

  std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> Snapshots() const override {
    std::shared_lock<std::shared_mutex> read(mu_);
    std::vector<std::shared_ptr<const decision::NodeGpuSnapshot>> out;
    out.reserve(nodes_.size());
    for (const auto& [name, record] : nodes_) out.push_back(record.snapshot);
    return out;
  }

  absl::Status Assume(const PodRef& pod, absl::string_view node, GpuSet gpus) override {
    std::unique_lock<std::shared_mutex> write(mu_);
    auto it = nodes_.find(node);
    if (it == nodes_.end()) return absl::NotFoundError(absl::StrCat("unknown node ", node));
    NodeRecord& record = it->second;
    if (auto held = pod_node_.find(pod.uid); held != pod_node_.end()) {
      const Holding& holding = nodes_.find(held->second)->second.pods.at(pod.uid);
      if (held->second == node && holding.ours && holding.ids == gpus) return absl::OkStatus();
      return absl::FailedPreconditionError(
          absl::StrCat("pod ", pod.key(), " already holds GPUs on node ", held->second));
    }
    const GpuSet free = record.snapshot->free();
    if (gpus.empty() || !free.contains(gpus)) {
      return absl::FailedPreconditionError(absl::StrCat("GPUs {", gpus.without(free).ToString(), "} of node ", node,
                                                        " are no longer free (free: {", free.ToString(), "})"));
    }
    record.pods[pod.uid] = Holding{gpus, gpus.size(), /*ours=*/true};
    pod_node_[pod.uid] = std::string(node);
    Rebuild(node, record);
    return absl::OkStatus();
  }

  absl::Status ObservePod(const PodRef& pod, absl::string_view node, int gpus,
                          std::optional<GpuSet> ids) override {
    std::unique_lock<std::shared_mutex> write(mu_);
    auto it = nodes_.find(node);
    if (it == nodes_.end()) return absl::NotFoundError(absl::StrCat("unknown node ", node));
    if (gpus < 0 || (ids && ids->size() != gpus)) {
      return absl::InvalidArgumentError(absl::StrCat("pod ", pod.key(), ": ", gpus, " GPUs with ids {",
                                                     ids ? ids->ToString() : "", "}"));
    }
    if (ids && !it->second.topology.topology->all_gpus().contains(*ids)) {
      return absl::InvalidArgumentError(absl::StrCat("pod ", pod.key(), ": GPU ids {", ids->ToString(),
                                                     "} are not on node ", node));
    }
    if (auto held = pod_node_.find(pod.uid); held != pod_node_.end()) {
      NodeRecord& previous = nodes_.find(held->second)->second;
      const Holding& holding = previous.pods.at(pod.uid);
      // The API confirming what topofit assumed changes nothing.
      if (held->second == node && holding.ours && (!ids || holding.ids == ids)) return absl::OkStatus();
      const std::string previous_node = held->second;
      previous.pods.erase(pod.uid);
      pod_node_.erase(held);
      Rebuild(previous_node, previous);
    }
    if (gpus > 0) {
      it->second.pods[pod.uid] = Holding{ids, gpus, /*ours=*/false};
      pod_node_[pod.uid] = std::string(node);
    }
    Rebuild(node, it->second);
    return absl::OkStatus();
  }

  bool Forget(absl::string_view pod_uid) override {
    std::unique_lock<std::shared_mutex> write(mu_);
    auto held = pod_node_.find(pod_uid);
    if (held == pod_node_.end()) return false;
    const std::string node = held->second;
    NodeRecord& record = nodes_.find(node)->second;
    record.pods.erase(std::string(pod_uid));
    pod_node_.erase(held);
    Rebuild(node, record);
    return true;
  }

  std::optional<std::pair<std::string, GpuSet>> AssignmentOf(absl::string_view pod_uid) const override {
    std::shared_lock<std::shared_mutex> read(mu_);
    auto held = pod_node_.find(pod_uid);
    if (held == pod_node_.end()) return std::nullopt;
    const Holding& holding = nodes_.find(held->second)->second.pods.at(std::string(pod_uid));
    if (!holding.ids) return std::nullopt;
    return std::make_pair(held->second, *holding.ids);
  }

 private:
  struct IndexEntry;
  // The node's slot in the hashed index. Called with a lock held.
  const IndexEntry* Find(absl::string_view node) const {
    auto it = by_name_.find(node);
    return it == by_name_.end() ? nullptr : &it->second;
  }
  // When a request last named the node, by name (the record's slot holds it).
  int64_t LastNamedNanos(absl::string_view node) const { return Find(node)->last_named.Load(); }

  void Seen(const IndexEntry& entry) const { Seen(entry, NowNanos()); }
  // Written only when a second old: nodes are forgotten after minutes, and a store to each slot on every
  // request would have a 5,000-node lookup wait on 5,000 store misses.
  static void Seen(const IndexEntry& entry, int64_t now) {
    constexpr int64_t kResolutionNanos = 1'000'000'000;
    if (now - entry.last_named.Load() >= kResolutionNanos) entry.last_named.Store(now);
  }

  int64_t NowNanos() const { return clock_ != nullptr ? absl::ToUnixNanos(clock_->Now()) : 0; }

  using NodeIt = std::map<std::string, NodeRecord, std::less<>>::iterator;
  // Erases a node's records (its snapshot goes to the keeper); returns the next record. Called with the
  // writer lock held.
  NodeIt Erase(NodeIt it) {
    keeper_.Retire(std::move(it->second.snapshot));
    by_name_.erase(absl::string_view(it->first));
    return nodes_.erase(it);
  }

  // Before a new node is added: forgets the nodes unseen for too long that hold no pods, then, if the state
  // is still full, evicts the least recently named tenth of the evictable nodes (from requests, without
  // pods), or refuses the node if there are none. The scan over every node runs at most once per tenth of
  // the forgetting time, and an eviction makes room for a tenth of the limit, so a flood of new nodes costs
  // no scan each. Called with the writer lock held.
  absl::Status MakeRoom() {
    const absl::Duration after = limits_.forget_unseen_after;
    if (clock_ != nullptr && after > absl::ZeroDuration()) {
      const absl::Time now = clock_->Now();
      if (now >= next_sweep_) {
        const int64_t cutoff = absl::ToUnixNanos(now - after);
        for (auto it = nodes_.begin(); it != nodes_.end();) {
          if (it->second.pods.empty() && LastNamedNanos(it->first) < cutoff) {
            if (limits_.on_forgotten) limits_.on_forgotten(it->first);
            it = Erase(it);
          } else {
            ++it;
          }
        }
        next_sweep_ = now + after / 10;
      }
    }
    if (nodes_.size() >= limits_.max_nodes) EvictLeastRecentlyNamed();
    if (nodes_.size() >= limits_.max_nodes) {
      return absl::ResourceExhaustedError(absl::StrCat("topofit already keeps ", nodes_.size(),
                                                       " nodes, its limit, all watched or holding pods"));
    }
    return absl::OkStatus();
  }

  void EvictLeastRecentlyNamed() {
    std::vector<std::pair<int64_t, std::string_view>> evictable;  // (last named, name)
    for (const auto& [name, record] : nodes_) {
      if (!record.watched && record.pods.empty()) {
        evictable.emplace_back(LastNamedNanos(name), name);
      }
    }
    const size_t count = std::min(evictable.size(), std::max<size_t>(limits_.max_nodes / 10, 1));
    std::nth_element(evictable.begin(), evictable.begin() + count, evictable.end());
    std::vector<std::string> evicted;
    evicted.reserve(count);
    for (size_t i = 0; i < count; ++i) evicted.emplace_back(evictable[i].second);
    for (const std::string& name : evicted) {
      if (auto it = nodes_.find(name); it != nodes_.end()) Erase(it);
      if (limits_.on_evicted) limits_.on_evicted(name);
    }
  }

  // Recomputes a node's snapshot from its holdings. Called with the writer lock held.
  void Rebuild(absl::string_view name, NodeRecord& record) {
    const topology::Topology& t = *record.topology.topology;
    auto snapshot = std::make_shared<decision::NodeGpuSnapshot>();
    snapshot->node = std::string(name);
    snapshot->topology = record.topology.topology;
    snapshot->topology_origin = record.topology.origin;
    snapshot->topology_reason = record.topology.reason;
    snapshot->origin = record.origin;
    snapshot->ready = record.ready;
    snapshot->gpus_through_dra = record.allocatable == 0 && record.dra_offered > 0;
    GpuSet known_elsewhere;
    // GPUs the topology has but the node does not offer (unhealthy, or not yet advertised), through the
    // device plugin or a DRA driver.
    int unknown = std::max(0, t.gpu_count() - record.allocatable - record.dra_offered);
    for (const auto& [uid, holding] : record.pods) {
      if (holding.ids) {
        const GpuSet ids = *holding.ids & t.all_gpus();
        snapshot->by_pod[uid] = ids;
        GpuSet& into = holding.ours ? snapshot->ours : known_elsewhere;
        into = into | ids;
      } else {
        unknown += holding.count;
      }
    }
    const GpuSet rest = t.all_gpus().without(snapshot->ours | known_elsewhere);
    const absl::StatusOr<GpuSet> assumed =
        topology::PessimisticOccupancy(t, rest, std::min(unknown, rest.size()));
    snapshot->elsewhere = known_elsewhere | (assumed.ok() ? *assumed : rest);
    by_name_.find(name)->second.snapshot = snapshot.get();
    if (record.snapshot != nullptr) keeper_.Retire(std::move(record.snapshot));
    record.snapshot = std::move(snapshot);
  }

  mutable std::shared_mutex mu_;
  std::map<std::string, NodeRecord, std::less<>> nodes_;
  // The same records by name, hashed: a NodeNames request looks up thousands of names, and a walk down the
  // tree of 5,000 records costs a dozen cache misses each (most of a 5,000-node filter's time before).
  // std::map never moves its records. Kept in step with nodes_ wherever a record is added or erased, and
  // with each record's snapshot, so that a lookup reads the slot alone (slot_name.h).
  struct IndexEntry {
    NodeRecord* record;
    const decision::NodeGpuSnapshot* snapshot;  // record->snapshot
    // When a request last named the node (absl::ToUnixNanos), here rather than in the record: a lookup
    // reads the slot anyway, and reading the record's line too cost a cache miss per node named (perf: the
    // most of a 5,000-node lookup's time).
    RelaxedNanos last_named;
  };
  absl::flat_hash_map<SlotName, IndexEntry, SlotNameHash, SlotNameEq> by_name_;
  std::map<std::string, std::string, std::less<>> pod_node_;  // pod uid -> node
  SnapshotKeeper keeper_;  // every snapshot replaced or dropped goes through it
  codec::TopologyResolver resolver_;
  const server::Clock* clock_;  // null: nothing is forgotten
  const GpuStateLimits limits_;
  absl::Time next_sweep_ = absl::InfinitePast();
};

}  // namespace

std::unique_ptr<GpuState> NewInMemoryGpuState() {
  return std::make_unique<InMemoryGpuState>(nullptr, GpuStateLimits{});
}

std::unique_ptr<GpuState> NewInMemoryGpuState(const server::Clock& clock, GpuStateLimits limits) {
  return std::make_unique<InMemoryGpuState>(&clock, std::move(limits));
}

}  // namespace topofit::scheduler
