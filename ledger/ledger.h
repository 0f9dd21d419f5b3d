#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "kube/objects.h"
#include "server/clock.h"
#include "topology/link.h"

namespace topofit::ledger {

// Capacity a pending GPU pod needs that no existing node can give it at its required topology: the
// extender records it, the expander reads it to pick the node group that serves it (DESIGN.md, "The
// ledger").
struct Preference {
  std::string pod_uid;
  std::string pod_key;  // namespace/name
  int gpus = 0;
  topology::LinkClass min_link = topology::LinkClass::kSys;
  int64_t min_bandwidth_mbps = 0;
  // The pod's product constraints as it states them: which node groups' templates may serve it.
  kube::StringMap node_selector;
  std::optional<kube::NodeSelector> required_node_affinity;
  std::vector<std::string> refused_nodes;  // existing nodes the extender refused, and why it did
  absl::Time first_seen;
  absl::Time last_seen;
};

// A scale-up the expander chose: node group `node_group` grows by `node_count` for these pods. The
// extender honours it by holding the new capacity for those pods for a bounded time.
struct Intent {
  std::string node_group;
  std::vector<std::string> pod_uids;  // those still pending: a pod leaves when it binds or goes (ForgetPod)
  // GPUs of those the new capacity is held for (pods requiring a topology; expander/intent.h).
  std::map<std::string, int> pod_gpus;
  int node_count = 0;
  kube::StringMap node_labels;  // what the group's nodes carry (node_group_identity.h)
  absl::Time recorded;
};

// Preferences and intents, shared by the extender and the expander. In one process (`topofit serve`,
// the bench) it is memory; across processes it will live in the Kubernetes API behind the same interface.
class Ledger {
 public:
  virtual ~Ledger() = default;
  // Adds or refreshes a pod's preference; a refresh keeps its first_seen.
  virtual void RecordPreference(Preference preference) = 0;
  // The pod was scheduled or deleted: drops its preference and removes it from intents.
  virtual void ForgetPod(const std::string& pod_uid) = 0;
  // Unexpired preferences, oldest first (then by uid).
  virtual std::vector<Preference> Preferences() const = 0;
  virtual void RecordIntent(Intent intent) = 0;
  // Unexpired intents, oldest first.
  virtual std::vector<Intent> Intents() const = 0;
};

// What the in-memory ledger keeps at most. Preferences come from filter calls and intents from BestOptions
// calls, which anyone who reaches the servers can make up, so both are capped: at the cap the least recently
// seen preference, or the oldest intent, makes room and is reported. Far above real demand: 10,000 pending
// GPU pods without a fitting node; one intent per CA loop (10 s) that picks a GPU group lives 15 minutes.
struct LedgerLimits {
  size_t max_preferences = 10'000;
  size_t max_intents = 1'000;
  // Called for each entry evicted at a cap, with kind "preference" (key: the pod uid) or "intent" (key: the
  // node group), under the ledger's lock: it must not call the ledger.
  std::function<void(absl::string_view kind, const std::string& key)> on_evicted;
};

// The clock decides expiry: a preference not refreshed within `preference_ttl` (its pod is gone or no
// longer asks) and an intent older than `intent_ttl` (the capacity came, or never will) are dropped.
// Recording costs O(log n) plus what expires; nothing is re-sorted per call.
std::unique_ptr<Ledger> NewInMemoryLedger(const server::Clock& clock, absl::Duration preference_ttl,
                                          absl::Duration intent_ttl, LedgerLimits limits = {});

}  // namespace topofit::ledger
