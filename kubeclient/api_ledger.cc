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

}  // namespace

ApiLedger::ApiLedger(KubeApi& kube, const server::Clock& clock, spdlog::logger& log, ApiLedgerOptions options)
    : kube_(kube),
      clock_(clock),
      log_(log),
      options_(std::move(options)),
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
  std::erase_if(entries_, [&](const auto& entry) { return !listed.contains(entry.first) && !entry.second.guarded(); });
  std::erase_if(names_, [&](const auto& name) { return !listed.contains(name.first); });
  std::erase_if(forgotten_, [&](const std::string& uid) { return !listed.contains(uid); });
  for (const kube::Pod& pod : pods) Observe(pod);
}

void ApiLedger::PodChanged(WatchEventType type, const kube::Pod& pod) {
  absl::MutexLock lock(&mu_);
  ++stats_.events;
  if (type == WatchEventType::kDeleted || !pod.spec.node_name.empty()) {
    Drop(pod.metadata.uid);
  } else {
    Observe(pod);
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
    server::LogEvent(log_, "ledger-bad-annotation", {{"pod", KeyOf(pod)}, {"error", std::string(status.message())}},
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
  entry.preference = std::move(observed);
  entry.intent = intent.ok() ? *std::move(intent) : std::nullopt;
  if (entry.empty() && !entry.guarded()) entries_.erase(uid);
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
  entries_.erase(uid);
  names_.erase(uid);
  forgotten_.erase(uid);
}

void ApiLedger::RecordPreference(decision::Preference preference) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  PruneExpired(now);
  const std::string uid = preference.pod_uid;
  forgotten_.erase(uid);
  Entry& entry = entries_[uid];
  preference.last_seen = now;
  preference.first_seen = entry.preference ? entry.preference->first_seen : now;
  const PreferenceAnnotation wanted = PreferenceAnnotationOf(preference);
  entry.preference = std::move(preference);
  const bool fresh_in_api = entry.in_api && entry.in_api->refused_nodes == wanted.refused_nodes &&
                            entry.in_api->first_seen == wanted.first_seen &&
                            now - entry.in_api->last_seen <= options_.preference_ttl / 2;
  if (!fresh_in_api) Write(uid, entry);
}

void ApiLedger::ForgetPod(const std::string& pod_uid) {
  absl::MutexLock lock(&mu_);
  entries_.erase(pod_uid);
  // Only a pod the watch still shows can deliver older events; its DELETED ends the tombstone.
  if (names_.contains(pod_uid)) forgotten_.insert(pod_uid);
}

std::vector<decision::Preference> ApiLedger::Preferences() const {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  std::vector<decision::Preference> out;
  for (const auto& [uid, entry] : entries_) {
    if (entry.preference && now - entry.preference->last_seen <= options_.preference_ttl) {
      out.push_back(*entry.preference);
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const decision::Preference& a, const decision::Preference& b) {
    return a.first_seen < b.first_seen;
  });
  return out;
}

void ApiLedger::RecordIntent(decision::Intent intent) {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  PruneExpired(now);
  intent.recorded = now;
  for (const std::string& uid : intent.pod_uids) {
    Entry& entry = entries_[uid];
    entry.intent = IntentAnnotationOf(intent, uid);
    Write(uid, entry);
  }
}

std::vector<decision::Intent> ApiLedger::Intents() const {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_.Now();
  // An intent is the pods whose annotations name the same group at the same time: oldest first, then by
  // group; its pods in uid order.
  std::map<std::pair<absl::Time, std::string>, decision::Intent> intents;
  for (const auto& [uid, entry] : entries_) {
    if (!entry.intent || now - entry.intent->recorded > options_.intent_ttl) continue;
    const IntentAnnotation& share = *entry.intent;
    auto [it, added] = intents.try_emplace({share.recorded, share.node_group});
    if (added) {
      it->second.node_group = share.node_group;
      it->second.node_count = share.node_count;
      it->second.node_labels = share.node_labels;
      it->second.recorded = share.recorded;
    }
    it->second.pod_uids.push_back(uid);
    if (share.held_gpus) it->second.pod_gpus[uid] = *share.held_gpus;
  }
  std::vector<decision::Intent> out;
  for (auto& [key, intent] : intents) out.push_back(std::move(intent));
  return out;
}

bool ApiLedger::WaitPublished(absl::Duration timeout) const { return publisher_->WaitIdle(timeout); }

ApiLedgerStats ApiLedger::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void ApiLedger::Write(const std::string& uid, Entry& entry) {
  entry.written = ++generation_;
  publisher_->Add(uid);
}

void ApiLedger::PruneExpired(absl::Time now) {
  for (auto& [uid, entry] : entries_) {
    if (entry.preference && now - entry.preference->last_seen > options_.preference_ttl) entry.preference.reset();
    if (entry.intent && now - entry.intent->recorded > options_.intent_ttl) entry.intent.reset();
  }
  std::erase_if(entries_, [](const auto& entry) { return entry.second.empty(); });
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
      server::LogEvent(log_, "ledger-unresolved-pod", {{"uid", uid}}, spdlog::level::debug);
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
    server::LogEvent(log_, "ledger-pod-gone", {{"pod", key}});
    Drop(uid);
    return CoalescingQueue::Outcome::kDone;
  }
  auto it = entries_.find(uid);
  if (!version.ok()) {
    ++stats_.publish_failures;
    server::LogEvent(log_, "ledger-publish-failed", {{"pod", key}, {"error", std::string(version.status().message())}},
                     spdlog::level::warn);
    return it == entries_.end() ? CoalescingQueue::Outcome::kDone : CoalescingQueue::Outcome::kRetry;
  }
  ++stats_.published;
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
