#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "decision/intent.h"
#include "decision/preference.h"
#include "kube/objects.h"
#include "ledger/node_group_templates.h"
#include "server/clock.h"

namespace topofit::ledger {

// Preferences, intents and node group templates, shared by the extender and the expander. In one process
// (`topofit serve`, the bench) it is memory; across processes it lives in the Kubernetes API behind the
// same interface (kubeclient/api_ledger.h).
class Ledger {
 public:
  virtual ~Ledger() = default;
  // Adds or refreshes a pod's preference; a refresh keeps its first_seen.
  virtual void RecordPreference(decision::Preference preference) = 0;
  // The pod was scheduled or deleted: drops its preference and removes it from intents.
  virtual void ForgetPod(const std::string& pod_uid) = 0;
  // Unexpired preferences, oldest first (then by uid).
  virtual std::vector<decision::Preference> Preferences() const = 0;
  virtual void RecordIntent(decision::Intent intent) = 0;
  // Unexpired intents, oldest first.
  std::vector<decision::Intent> Intents() const { return *IntentsView(); }

  // What a filter reads, without copying the ledger (issue 15). The unexpired intents as one immutable
  // snapshot shared by readers: rebuilt only after an intent changes or the oldest one expires.
  virtual std::shared_ptr<const std::vector<decision::Intent>> IntentsView() const = 0;
  // The unexpired preferences of these pods (uids not found are skipped), oldest first.
  virtual std::vector<decision::Preference> PreferencesOf(const std::vector<std::string>& pod_uids) const = 0;
  // How many preferences are kept (expired ones not yet dropped included).
  virtual size_t PreferenceCount() const = 0;

  // The GPU node groups' templates cluster-autoscaler sent the expander (BestOptions' nodeMap), by group
  // id: the capacity the cluster can grow, including groups at size zero, which no node shows (the
  // extender asks for capacity only of a shape it knows: decision/capacity_ask.h). A group's later
  // template replaces its earlier one, unless it is untrusted and the earlier one trusted
  // (NodeGroupTemplate says who is trusted).
  // Taken by value: the expander builds the map for this call only, so its templates move in.
  virtual void RecordNodeGroups(std::map<std::string, kube::Node> templates, bool trusted) = 0;
  // The templates recorded within LedgerLimits::node_group_ttl, by group id, each with its trust.
  virtual std::map<std::string, NodeGroupTemplate> NodeGroups() const = 0;
};

// What a ledger keeps at most, in memory and in the API alike. Preferences come from filter calls and intents from BestOptions
// calls, which anyone who reaches the servers can make up, so both are capped: at the cap a preference, or
// the oldest intent, makes room and is reported. The preference is the least recently seen of those seen
// only once, so a flood of invented pods pushes out its own, not the preferences real pods renew on each
// retry (ledger/preference_recency.h). The intent is the oldest of those whose pods have no preference
// here (a real scale-up is for pods the extender refused, which have one; a forged BestOptions names pods
// of its own), else the oldest. Far above real demand: 10,000 pending
// GPU pods without a fitting node; one intent per CA loop (10 s) that picks a GPU group lives 15 minutes.
struct LedgerLimits {
  size_t max_preferences = 10'000;
  size_t max_intents = 1'000;
  // Node group templates: far above any cluster's group count. One not offered again within the TTL is
  // dropped (its group was deleted, or nothing pending fitted it for a day).
  size_t max_node_groups = 1'000;
  absl::Duration node_group_ttl = absl::Hours(24);
  // Called for each entry evicted at a cap, with kind "preference" (key: the pod uid), "intent" (key: the
  // node group) or "node-group" (key: the group id), under the ledger's lock: it must not call the ledger.
  std::function<void(absl::string_view kind, const std::string& key)> on_evicted;
};

// How long the ledger keeps what it is told: one set of defaults for every process that holds a ledger
// (in memory or in the API) and for the replay.
struct Lifetimes {
  // A pending pod's preference without a refresh: kube-scheduler retries an unschedulable pod at least
  // every 5 minutes, so one missed retry does not lose it.
  absl::Duration preference = absl::Minutes(10);
  // An intent, from its scale-up: CA's max node provision time, by which the capacity came or never will.
  absl::Duration intent = absl::Minutes(15);
};

// The clock decides expiry: a preference not refreshed within `lifetimes.preference` (its pod is gone or
// no longer asks) and an intent older than `lifetimes.intent` are dropped. Recording costs O(log n) plus
// what expires; nothing is re-sorted per call.
std::unique_ptr<Ledger> NewInMemoryLedger(const server::Clock& clock, Lifetimes lifetimes = {}, LedgerLimits limits = {});

}  // namespace topofit::ledger
