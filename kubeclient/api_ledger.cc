#include "kubeclient/api_ledger.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "kube/topofit_annotations.h"
#include "server/logging.h"

namespace topofit::kubeclient {
namespace {

std::string KeyOf(const kube::Pod& pod) { return absl::StrCat(pod.metadata.namespace_name, "/", pod.metadata.name); }

NodeGroupsConfigMapOptions NodeGroupsOptions(const ApiLedgerOptions& ledger) {
  NodeGroupsConfigMapOptions options;
  options.namespace_name = ledger.node_groups_namespace;
  options.ttl = ledger.limits.node_group_ttl;
  options.max_groups = ledger.limits.max_node_groups;
  if (ledger.limits.on_evicted) {
    options.on_evicted = [on_evicted = ledger.limits.on_evicted](const std::string& group) {
      on_evicted("node-group", group);
    };
  }
  options.poll_interval = ledger.node_groups_poll_interval;
  options.publishing = ledger.publishing;
  options.shutdown_grace = ledger.shutdown_grace;
  return options;
}

}  // namespace

ApiLedger::ApiLedger(KubeApi& kube, const server::Clock& clock, spdlog::logger& log, ApiLedgerOptions options)
    : kube_(kube),
      clock_(clock),
      log_(log),
      options_(std::move(options)),
      publishing_(log, clock, "ledger_publish", {}),
      intents_view_(options_.lifetimes.intent),
      node_groups_(std::make_unique<NodeGroupsConfigMap>(kube, clock, log, NodeGroupsOptions(options_))),
      publisher_(std::make_unique<CoalescingQueue>([this](const std::string& uid) { return Publish(uid); },
                                                   options_.publishing)) {}

ApiLedger::~ApiLedger() { publisher_->WaitIdle(options_.shutdown_grace); }

WatchHandler<kube::Pod> ApiLedger::PodHandler() {
  return WatchHandlerOf(*this, &ApiLedger::SyncPods, &ApiLedger::PodChanged);
}

void ApiLedger::SyncPods(const std::vector<kube::Pod>& pods) {
  absl::MutexLock lock(&mu_);
  ++stats_.syncs;
  std::set<std::string> listed;
  for (const kube::Pod& pod : pods) listed.insert(pod.metadata.uid);
  // A pod missing from the list left the pending set while the watch was not looking. A guarded entry
  // stays: its write is newer than what the list may have missed, and the TTLs bound it.
  std::vector<std::string> gone;
  for (const auto& [uid, entry] : entries_) {
    if (!listed.contains(uid) && !entry.guarded()) gone.push_back(uid);
  }
  for (const std::string& uid : gone) Erase(uid);
  std::erase_if(names_, [&](const auto& name) { return !listed.contains(name.first); });
  std::erase_if(forgotten_, [&](const std::string& uid) { return !listed.contains(uid); });
  for (const kube::Pod& pod : pods) Observe(pod);
  EnforceLimits();
}

void ApiLedger::PodChanged(WatchEventType type, const kube::Pod& pod) {
  absl::MutexLock lock(&mu_);
  ++stats_.events;
  if (type == WatchEventType::kDeleted || !pod.spec.node_name.empty()) {
    Drop(pod.metadata.uid);
  } else {
    Observe(pod);
    EnforceLimits();
  }
}

void ApiLedger::Observe(const kube::Pod& pod) {
  const std::string& uid = pod.metadata.uid;
  if (uid.empty()) return;
  const bool named = names_.contains(uid);
  names_[uid] = PodName{pod.metadata.namespace_name, pod.metadata.name};
  if (forgotten_.contains(uid)) return;  // bound or gone: this event is older than ForgetPod
  auto it = entries_.find(uid);
  if (it == entries_.end()) {
    Apply(uid, entries_[uid], pod);
    return;
  }
  Entry& entry = it->second;
  // A write that waited for the pod's name can go now.
  if (!named && entry.written != entry.published) publisher_->Add(uid);
  if (!entry.guarded()) {
    Apply(uid, entry, pod);
    return;
  }
  entry.held = pod;
  entry.delivered.insert(pod.metadata.resource_version);
  if (entry.written == entry.published && entry.delivered.contains(entry.echo)) Lift(uid, entry);
}

void ApiLedger::Apply(const std::string& uid, Entry& entry, const kube::Pod& pod) {
  absl::StatusOr<std::optional<decision::Preference>> preference = PreferenceOfPod(pod);
  absl::StatusOr<std::optional<IntentAnnotation>> intent = IntentOfPod(pod);
  for (const absl::Status& status : {preference.status(), intent.status()}) {
    if (status.ok()) continue;
    ++stats_.bad_annotations;
    server::LogEvent(log_, "ledger_bad_annotation", {{"pod", KeyOf(pod)}, {"error", std::string(status.message())}},
                     spdlog::level::warn);
  }
  std::optional<decision::Preference> observed = preference.ok() ? *std::move(preference) : std::nullopt;
  entry.in_api.reset();
  if (observed) {
    entry.in_api = PreferenceAnnotationOf(*observed);
    // Refreshes this process did not publish (the API's lastSeen is at most half a TTL old) stay.
    if (entry.preference) {
      observed->first_seen = std::min(observed->first_seen, entry.preference->first_seen);
      observed->last_seen = std::max(observed->last_seen, entry.preference->last_seen);
    }
  }
  SetPreference(uid, entry, std::move(observed));
  SetIntent(uid, entry, intent.ok() ? *std::move(intent) : std::nullopt);
  if (entry.empty() && !entry.guarded()) Erase(uid);
}

void ApiLedger::Lift(const std::string& uid, Entry& entry) {
  entry.echo.clear();
  entry.delivered.clear();
  if (!entry.held) return;
  const kube::Pod latest = *std::move(entry.held);
  entry.held.reset();
  Apply(uid, entry, latest);
}

void ApiLedger::Drop(const std::string& uid) {
  Erase(uid);
  names_.erase(uid);
  forgotten_.erase(uid);
}

void ApiLedger::RecordPreference(decision::Preference preference) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  PruneExpired(now);
  const std::string uid = preference.pod_uid;
  forgotten_.erase(uid);
  if (auto it = entries_.find(uid); it == entries_.end() || !it->second.preference) {
    EvictPreferencesOver(MaxPreferences() - 1);  // room for this one
  }
  Entry& entry = entries_[uid];
  preference.last_seen = now;
  preference.first_seen = entry.preference ? entry.preference->first_seen : now;
  const PreferenceAnnotation wanted = PreferenceAnnotationOf(preference);
  SetPreference(uid, entry, std::move(preference));
  const bool fresh_in_api = entry.in_api && entry.in_api->refused_nodes == wanted.refused_nodes &&
                            entry.in_api->first_seen == wanted.first_seen &&
                            now - entry.in_api->last_seen <= options_.lifetimes.preference / 2;
  if (!fresh_in_api) Write(uid, entry);
}

void ApiLedger::ForgetPod(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  Erase(pod_uid);
  // Only a pod the watch still shows can deliver older events; its DELETED ends the tombstone.
  if (names_.contains(pod_uid)) forgotten_.insert(pod_uid);
}

std::vector<decision::Preference> ApiLedger::Preferences() const {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  std::vector<decision::Preference> out;
  out.reserve(by_first_seen_.size());
  for (const auto& [first_seen, uid] : by_first_seen_) {
    const decision::Preference& preference = *entries_.at(uid).preference;
    if (now - preference.last_seen <= options_.lifetimes.preference) out.push_back(preference);
  }
  return out;
}

std::vector<decision::Preference> ApiLedger::PreferencesOf(const std::vector<std::string>& pod_uids) const {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  std::set<std::pair<absl::Time, std::string>> wanted;  // the order Preferences() gives
  for (const std::string& uid : pod_uids) {
    auto it = entries_.find(uid);
    if (it == entries_.end() || !it->second.preference) continue;
    if (now - it->second.preference->last_seen <= options_.lifetimes.preference) {
      wanted.emplace(it->second.preference->first_seen, uid);
    }
  }
  std::vector<decision::Preference> out;
  out.reserve(wanted.size());
  for (const auto& [first_seen, uid] : wanted) out.push_back(*entries_.at(uid).preference);
  return out;
}

size_t ApiLedger::PreferenceCount() const {
  absl::MutexLock lock(&mu_);
  return recency_.size();
}

void ApiLedger::RecordIntent(decision::Intent intent) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  PruneExpired(now);
  intent.recorded = now;
  if (intent.pod_uids.empty()) return;
  if (!intents_.contains({now, intent.node_group})) EvictIntentsOver(MaxIntents() - 1);  // room for this one
  for (const std::string& uid : intent.pod_uids) {
    Entry& entry = entries_[uid];
    SetIntent(uid, entry, IntentAnnotationOf(intent, uid));
    Write(uid, entry);
  }
}

std::shared_ptr<const std::vector<decision::Intent>> ApiLedger::IntentsView() const {
  absl::MutexLock lock(&mu_);
  // An intent is the pods whose annotations name the same group at the same time: oldest first, then by
  // group; its pods in uid order.
  return intents_view_.Get(clock_.Now(), [&] {
    std::vector<decision::Intent> out;
    out.reserve(intents_.size());
    for (const auto& [key, uids] : intents_) {
      const IntentAnnotation& first = *entries_.at(*uids.begin()).intent;
      decision::Intent& intent = out.emplace_back();
      intent.node_group = first.node_group;
      intent.node_count = first.node_count;
      intent.node_labels = first.node_labels;
      intent.recorded = first.recorded;
      for (const std::string& uid : uids) {
        intent.pod_uids.push_back(uid);
        if (const std::optional<int>& held = entries_.at(uid).intent->held_gpus) intent.pod_gpus[uid] = *held;
      }
    }
    return out;
  });
}

void ApiLedger::RecordNodeGroups(std::map<std::string, kube::Node> templates, bool trusted) {
  node_groups_->Record(templates, trusted);
}

std::map<std::string, ledger::NodeGroupTemplate> ApiLedger::NodeGroups() const { return node_groups_->Live(); }

bool ApiLedger::WaitPublished(absl::Duration timeout) const {
  return publisher_->WaitIdle(timeout) && node_groups_->WaitPublished(timeout);
}

ApiLedgerStats ApiLedger::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void ApiLedger::Write(const std::string& uid, Entry& entry) {
  entry.written = ++generation_;
  publisher_->Add(uid);
}

void ApiLedger::PruneExpired(absl::Time now) {
  for (auto oldest = recency_.LeastRecentlySeen(); oldest && now - oldest->first > options_.lifetimes.preference;
       oldest = recency_.LeastRecentlySeen()) {
    const std::string uid = oldest->second;
    SetPreference(uid, entries_.at(uid), std::nullopt);
    EraseIfEmpty(uid);
  }
  while (!intents_.empty() && now - intents_.begin()->first.first > options_.lifetimes.intent) {
    const std::set<std::string> uids = intents_.begin()->second;  // a copy: SetIntent changes it
    for (const std::string& uid : uids) {
      SetIntent(uid, entries_.at(uid), std::nullopt);
      EraseIfEmpty(uid);
    }
  }
}

void ApiLedger::SetPreference(const std::string& uid, Entry& entry, std::optional<decision::Preference> preference) {
  if (entry.preference) {
    recency_.Remove(*entry.preference);
    by_first_seen_.erase({entry.preference->first_seen, uid});
  }
  entry.preference = std::move(preference);
  if (entry.preference) {
    recency_.Add(*entry.preference);
    by_first_seen_.emplace(entry.preference->first_seen, uid);
  }
}

void ApiLedger::SetIntent(const std::string& uid, Entry& entry, std::optional<IntentAnnotation> intent) {
  if (entry.intent == intent) return;
  if (entry.intent) {
    auto it = intents_.find({entry.intent->recorded, entry.intent->node_group});
    it->second.erase(uid);
    if (it->second.empty()) intents_.erase(it);
  }
  entry.intent = std::move(intent);
  if (entry.intent) intents_[{entry.intent->recorded, entry.intent->node_group}].insert(uid);
  intents_view_.Invalidate();
}

void ApiLedger::Erase(const std::string& uid) {
  auto it = entries_.find(uid);
  if (it == entries_.end()) return;
  SetPreference(uid, it->second, std::nullopt);
  SetIntent(uid, it->second, std::nullopt);
  entries_.erase(it);
}

void ApiLedger::EraseIfEmpty(const std::string& uid) {
  auto it = entries_.find(uid);
  if (it != entries_.end() && it->second.empty()) entries_.erase(it);
}

size_t ApiLedger::MaxPreferences() const { return std::max<size_t>(options_.limits.max_preferences, 1); }
size_t ApiLedger::MaxIntents() const { return std::max<size_t>(options_.limits.max_intents, 1); }

void ApiLedger::EvictPreferencesOver(size_t max) {
  while (recency_.size() > max) {
    const std::string uid = *recency_.NextEvicted();
    SetPreference(uid, entries_.at(uid), std::nullopt);
    EraseIfEmpty(uid);
    Evicted("preference", uid);
    ++stats_.evicted_preferences;
  }
}

void ApiLedger::EvictIntentsOver(size_t max) {
  while (intents_.size() > max) {
    // The oldest intent whose pods have no preference (ledger::LedgerLimits), else the oldest.
    auto evicted = std::find_if(intents_.begin(), intents_.end(), [&](const auto& intent) {
      return std::none_of(intent.second.begin(), intent.second.end(),
                          [&](const std::string& uid) { return entries_.at(uid).preference.has_value(); });
    });
    if (evicted == intents_.end()) evicted = intents_.begin();
    const std::string group = evicted->first.second;
    const std::set<std::string> uids = evicted->second;
    for (const std::string& uid : uids) {
      SetIntent(uid, entries_.at(uid), std::nullopt);
      EraseIfEmpty(uid);
    }
    Evicted("intent", group);
    ++stats_.evicted_intents;
  }
}

void ApiLedger::EnforceLimits() {
  EvictPreferencesOver(MaxPreferences());
  EvictIntentsOver(MaxIntents());
}

void ApiLedger::Evicted(absl::string_view kind, const std::string& key) {
  if (options_.limits.on_evicted) options_.limits.on_evicted(kind, key);
}

std::optional<ApiLedger::PodName> ApiLedger::NameOf(const std::string& uid, const Entry& entry) const {
  if (auto it = names_.find(uid); it != names_.end()) return it->second;
  if (!entry.preference) return std::nullopt;
  const std::vector<std::string> parts = absl::StrSplit(entry.preference->pod_key, absl::MaxSplits('/', 1));
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) return std::nullopt;
  return PodName{parts[0], parts[1]};
}

CoalescingQueue::Outcome ApiLedger::Publish(const std::string& uid) {
  PodName pod;
  kube::StringMap annotations;
  std::optional<PreferenceAnnotation> preference;
  uint64_t generation = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(uid);
    if (it == entries_.end() || it->second.written == it->second.published) return CoalescingQueue::Outcome::kDone;
    const Entry& entry = it->second;
    std::optional<PodName> name = NameOf(uid, entry);
    if (!name) {
      ++stats_.unresolved;  // published when the watch names the pod (Observe)
      server::LogEvent(log_, "ledger_unresolved_pod", {{"uid", uid}}, spdlog::level::debug);
      return CoalescingQueue::Outcome::kDone;
    }
    pod = *std::move(name);
    if (entry.preference) {
      preference = PreferenceAnnotationOf(*entry.preference);
      annotations[std::string(kube::kPlacementPreferenceAnnotation)] = PreferenceAnnotationJson(*preference);
    }
    if (entry.intent) annotations[std::string(kube::kScaleUpIntentAnnotation)] = IntentAnnotationJson(*entry.intent);
    generation = entry.written;
  }
  absl::StatusOr<std::string> version = kube_.MergePodAnnotations(pod.namespace_name, pod.name, annotations);

  absl::MutexLock lock(&mu_);
  const std::string key = absl::StrCat(pod.namespace_name, "/", pod.name);
  if (absl::IsNotFound(version.status())) {
    ++stats_.pods_gone;
    if (options_.on_publish) options_.on_publish("pod_gone");
    server::LogEvent(log_, "ledger_pod_gone", {{"pod", key}});
    Drop(uid);
    return CoalescingQueue::Outcome::kDone;
  }
  auto it = entries_.find(uid);
  if (!version.ok()) {
    ++stats_.publish_failures;
    if (options_.on_publish) options_.on_publish("failed");
    // Reason: the status code alone, so that an API server down for every pod is one line, not one per pod.
    publishing_.Failed(absl::StatusCodeToString(version.status().code()), absl::ZeroDuration(),
                       absl::StrCat(key, ": ", version.status().message()));
    return it == entries_.end() ? CoalescingQueue::Outcome::kDone : CoalescingQueue::Outcome::kRetry;
  }
  ++stats_.published;
  if (options_.on_publish) options_.on_publish("ok");
  publishing_.Succeeded();
  if (it == entries_.end()) return CoalescingQueue::Outcome::kDone;  // forgotten meanwhile
  Entry& entry = it->second;
  if (preference) entry.in_api = std::move(preference);
  entry.published = generation;
  entry.echo = *version;
  // A newer write is queued again (CoalescingQueue::Add while running) and keeps the guard up.
  if (entry.written == generation && (entry.echo.empty() || entry.delivered.contains(entry.echo))) {
    Lift(uid, entry);
  }
  return CoalescingQueue::Outcome::kDone;
}

}  // namespace topofit::kubeclient
