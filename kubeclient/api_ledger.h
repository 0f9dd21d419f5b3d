#pragma once

// The ledger across processes and restarts (issue 6): preferences and intents live on the pods they are
// about, as annotations (kubeclient/ledger_annotations.h), so an extender and an expander in different
// Deployments agree and a restart loses nothing (docs/kubeclient.md, "The ledger in the API").
//
// Reads are served from memory: no API call on the filter or BestOptions path. Writes change memory at
// once and are published by a writer thread (CoalescingQueue: per pod, only its latest state is
// written; a failed patch is retried with backoff; 404 means the pod is gone and drops it). A refreshed
// preference is published only when its content changes or the lastSeen in the API is older than half the
// preference TTL, so kube-scheduler's retries do not become a patch each while other readers never see it
// expire.
//
// Memory is fed by a watch of pending pods (PodHandler, for ListWatcher::ForPods with "spec.nodeName="):
//
//   pod listed, ADDED or MODIFIED        -> its entries, from its annotations (times from them: the TTLs
//                                           expire what nobody refreshes, as in memory)
//   pod DELETED (with the selector: also bound), or bound -> forgotten
//   sync (relist)                        -> replaces everything learned from the API
//
// Ordering: a pod with a local write the watch has not yet shown back is guarded. Events for it are held
// back (the latest kept) until the watch delivers the resourceVersion the publishing patch returned —
// every event before it is older than the write, every event from it on includes it — and that latest
// event is then applied. So an older event never clobbers a write, published or not. A DELETED is never
// held back (a pod that binds or goes does not come back), and ForgetPod's pod ignores events until its
// DELETED: the gpu-ids annotation the extender writes just before binding arrives after ForgetPod.
//
// Bounded as the in-memory ledger is (ledger::LedgerLimits): at the cap a preference (in
// ledger::PreferenceRecency's order: the least recently seen of those never renewed first), or the oldest intent (all its pods' shares), leaves memory; counted (stats().evicted_*) and
// reported to LedgerLimits::on_evicted. Memory only: the annotation stays on the pod, whose next event
// may bring it back (and evict again). Reads are indexed: expiry and eviction take from the front of
// ordered indexes, Preferences() sorts nothing, and the intents are grouped once per change
// (IntentsView), not per filter.
//
// Intents hold uids; publishing needs the pod's namespace and name, from the watch (every pending pod)
// or from the pod's preference. A uid known by neither is kept in memory and published when the watch
// names it; until then it is counted (stats().unresolved) and logged at debug.
//
// Thread-safe.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <spdlog/logger.h>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kube/objects.h"
#include "kubeclient/coalescing_queue.h"
#include "kubeclient/kube_api.h"
#include "kubeclient/ledger_annotations.h"
#include "kubeclient/list_watcher.h"
#include "kubeclient/node_groups_config_map.h"
#include "ledger/intents_view.h"
#include "ledger/ledger.h"
#include "ledger/preference_recency.h"
#include "server/clock.h"
#include "server/condition_log.h"

namespace topofit::kubeclient {

struct ApiLedgerOptions {
  ledger::Lifetimes lifetimes;
  CoalescingQueueOptions publishing;
  // At destruction, writes not yet published get this long to reach the API: a graceful restart loses
  // nothing.
  absl::Duration shutdown_grace = absl::Seconds(5);
  ledger::LedgerLimits limits;
  // Told of every annotation patch's outcome ("ok", "failed": retried, "pod_gone": the pod's entries
  // dropped), on the writer thread, for the process's metrics; may be null.
  std::function<void(absl::string_view result)> on_publish;
  // The node group templates' ConfigMap (node_groups_config_map.h): its namespace, the components' own
  // (kubeclient::OwnNamespace), and how often it is read back.
  std::string node_groups_namespace = "default";
  absl::Duration node_groups_poll_interval = absl::Seconds(30);
};

struct ApiLedgerStats {
  int64_t syncs = 0;
  int64_t events = 0;
  int64_t published = 0;        // patches the API server accepted
  int64_t publish_failures = 0; // patches that failed and are retried
  int64_t pods_gone = 0;        // 404 on a patch: the pod's entries dropped
  int64_t unresolved = 0;       // publishes skipped: no pod name known for the uid (yet)
  int64_t bad_annotations = 0;  // annotations ignored: not valid, or the pod's demand is not
  int64_t evicted_preferences = 0;  // at ledger::LedgerLimits::max_preferences
  int64_t evicted_intents = 0;      // at ledger::LedgerLimits::max_intents
};

class ApiLedger final : public ledger::Ledger {
 public:
  // `kube`, `clock` and `log` must outlive this object. Starts the writer thread.
  ApiLedger(KubeApi& kube, const server::Clock& clock, spdlog::logger& log, ApiLedgerOptions options);
  ~ApiLedger() override;
  ApiLedger(const ApiLedger&) = delete;
  ApiLedger& operator=(const ApiLedger&) = delete;

  // For ListWatcher::ForPods with the field selector "spec.nodeName=".
  WatchHandler<kube::Pod> PodHandler();
  void SyncPods(const std::vector<kube::Pod>& pods);
  void PodChanged(WatchEventType type, const kube::Pod& pod);

  void RecordPreference(decision::Preference preference) override;
  void ForgetPod(const std::string& pod_uid) override;
  std::vector<decision::Preference> Preferences() const override;
  void RecordIntent(decision::Intent intent) override;
  std::shared_ptr<const std::vector<decision::Intent>> IntentsView() const override;
  std::vector<decision::Preference> PreferencesOf(const std::vector<std::string>& pod_uids) const override;
  size_t PreferenceCount() const override;
  // Kept in a ConfigMap rather than on pods: node_groups() (its reader is started by its Start()).
  void RecordNodeGroups(std::map<std::string, kube::Node> templates, bool trusted) override;
  std::map<std::string, ledger::NodeGroupTemplate> NodeGroups() const override;
  NodeGroupsConfigMap& node_groups() { return *node_groups_; }

  // Waits up to `timeout` until every write is published (or dropped); true when none is left.
  bool WaitPublished(absl::Duration timeout) const;
  ApiLedgerStats stats() const;

 private:
  struct Entry {
    std::optional<decision::Preference> preference;
    std::optional<IntentAnnotation> intent;
    // The preference annotation the API holds, as far as this process knows (published or watched).
    std::optional<PreferenceAnnotation> in_api;
    // The ordering guard (above): generations of the latest local write and of the latest published one,
    // the resourceVersion that publish returned until the watch delivers it, the resourceVersions
    // delivered meanwhile, and the latest event held back.
    uint64_t written = 0;
    uint64_t published = 0;
    std::string echo;
    std::set<std::string> delivered;
    std::optional<kube::Pod> held;
    bool guarded() const { return written != published || !echo.empty(); }
    bool empty() const { return !preference && !intent; }
  };
  struct PodName {
    std::string namespace_name;
    std::string name;
  };

  CoalescingQueue::Outcome Publish(const std::string& uid);
  void Observe(const kube::Pod& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Apply(const std::string& uid, Entry& entry, const kube::Pod& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Lift(const std::string& uid, Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Write(const std::string& uid, Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Drop(const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PruneExpired(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Every change of an entry's preference or intent goes through these, which keep the indexes.
  void SetPreference(const std::string& uid, Entry& entry, std::optional<decision::Preference> preference)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetIntent(const std::string& uid, Entry& entry, std::optional<IntentAnnotation> intent)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Erase(const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseIfEmpty(const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Evicts down to the limits, least recently seen preferences and oldest intents first: before recording
  // a new entry (to make room for it), and after the watch adds some.
  size_t MaxPreferences() const;
  size_t MaxIntents() const;
  void EvictPreferencesOver(size_t max) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EvictIntentsOver(size_t max) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EnforceLimits() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Evicted(absl::string_view kind, const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<PodName> NameOf(const std::string& uid, const Entry& entry) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  KubeApi& kube_;
  const server::Clock& clock_;
  spdlog::logger& log_;
  const ApiLedgerOptions options_;
  server::ConditionLog publishing_;  // failed patches, logged once per change of reason
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);   // by uid: ordered, so ties sort by uid
  std::map<std::string, PodName> names_ ABSL_GUARDED_BY(mu_);   // pending pods the watch shows, by uid
  std::set<std::string> forgotten_ ABSL_GUARDED_BY(mu_);        // ForgetPod'ed, until the watch drops them
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  // The indexes: (last seen, uid) for expiry and eviction, (first seen, uid) for the order read, and the
  // pods of each intent by (recorded, node group), oldest first.
  using TimeIndex = std::set<std::pair<absl::Time, std::string>>;
  ledger::PreferenceRecency recency_ ABSL_GUARDED_BY(mu_);  // expiry and eviction order
  TimeIndex by_first_seen_ ABSL_GUARDED_BY(mu_);
  std::map<std::pair<absl::Time, std::string>, std::set<std::string>> intents_ ABSL_GUARDED_BY(mu_);
  mutable ledger::IntentsViewCache intents_view_ ABSL_GUARDED_BY(mu_);
  ApiLedgerStats stats_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<NodeGroupsConfigMap> node_groups_;
  // Last: its worker calls Publish, so it is built after the state above and stopped before it goes.
  std::unique_ptr<CoalescingQueue> publisher_;
};

}  // namespace topofit::kubeclient
