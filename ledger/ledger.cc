#include "ledger/ledger.h"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <utility>

#include "ledger/intents_view.h"
#include "ledger/node_group_templates.h"
#include "ledger/preference_recency.h"

namespace topofit::ledger {
namespace {

class InMemoryLedger final : public Ledger {
 public:
  InMemoryLedger(const server::Clock& clock, absl::Duration preference_ttl, absl::Duration intent_ttl,
                 LedgerLimits limits)
      : clock_(clock),
        preference_ttl_(preference_ttl),
        intent_ttl_(intent_ttl),
        limits_(std::move(limits)),
        intents_view_(intent_ttl),
        node_groups_(limits_.node_group_ttl, limits_.max_node_groups, [this](const std::string& group) {
          if (limits_.on_evicted) limits_.on_evicted("node-group", group);
        }) {}

  void RecordPreference(decision::Preference preference) override {
    std::lock_guard<std::mutex> lock(mu_);
    const absl::Time now = clock_.Now();
    PruneExpired(now);
    preference.last_seen = now;
    auto it = preferences_.find(preference.pod_uid);
    if (it != preferences_.end()) {
      preference.first_seen = it->second.first_seen;
      Unindex(it->second);
      it->second = std::move(preference);
    } else {
      if (preferences_.size() >= std::max<size_t>(limits_.max_preferences, 1)) {
        const std::string evicted = *recency_.NextEvicted();
        Erase(preferences_.find(evicted));
        if (limits_.on_evicted) limits_.on_evicted("preference", evicted);
      }
      preference.first_seen = now;
      it = preferences_.emplace(preference.pod_uid, std::move(preference)).first;
    }
    recency_.Add(it->second);
    by_first_seen_.emplace(it->second.first_seen, it->first);
  }

  void ForgetPod(const std::string& pod_uid) override {
    std::lock_guard<std::mutex> lock(mu_);
    Erase(preferences_.find(pod_uid));
    for (decision::Intent& intent : intents_) {
      if (std::erase(intent.pod_uids, pod_uid) > 0) intents_view_.Invalidate();
      intent.pod_gpus.erase(pod_uid);
    }
    std::erase_if(intents_, [](const decision::Intent& intent) { return intent.pod_uids.empty(); });
  }

  std::vector<decision::Preference> Preferences() const override {
    std::lock_guard<std::mutex> lock(mu_);
    const absl::Time now = clock_.Now();
    std::vector<decision::Preference> out;
    out.reserve(preferences_.size());
    for (const auto& [first_seen, uid] : by_first_seen_) {
      const decision::Preference& preference = preferences_.at(uid);
      if (now - preference.last_seen <= preference_ttl_) out.push_back(preference);
    }
    return out;
  }

  std::vector<decision::Preference> PreferencesOf(const std::vector<std::string>& pod_uids) const override {
    std::lock_guard<std::mutex> lock(mu_);
    const absl::Time now = clock_.Now();
    std::vector<decision::Preference> out;
    for (const std::string& uid : pod_uids) {
      auto it = preferences_.find(uid);
      if (it != preferences_.end() && now - it->second.last_seen <= preference_ttl_) out.push_back(it->second);
    }
    std::sort(out.begin(), out.end(), [](const decision::Preference& a, const decision::Preference& b) {
      return std::tie(a.first_seen, a.pod_uid) < std::tie(b.first_seen, b.pod_uid);
    });
    const auto same_pod = [](const decision::Preference& a, const decision::Preference& b) {
      return a.pod_uid == b.pod_uid;
    };
    out.erase(std::unique(out.begin(), out.end(), same_pod), out.end());
    return out;
  }

  size_t PreferenceCount() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return preferences_.size();
  }

  void RecordIntent(decision::Intent intent) override {
    std::lock_guard<std::mutex> lock(mu_);
    intent.recorded = clock_.Now();
    PruneExpired(intent.recorded);
    if (intents_.size() >= std::max<size_t>(limits_.max_intents, 1)) {
      auto evicted = std::find_if(intents_.begin(), intents_.end(), [&](const decision::Intent& kept) {
        return std::none_of(kept.pod_uids.begin(), kept.pod_uids.end(),
                            [&](const std::string& uid) { return preferences_.contains(uid); });
      });
      if (evicted == intents_.end()) evicted = intents_.begin();
      const std::string group = evicted->node_group;
      intents_.erase(evicted);
      if (limits_.on_evicted) limits_.on_evicted("intent", group);
    }
    intents_.push_back(std::move(intent));
    intents_view_.Invalidate();
  }

  void RecordNodeGroups(std::map<std::string, kube::Node> templates, bool trusted) override {
    std::lock_guard<std::mutex> lock(mu_);
    const absl::Time now = clock_.Now();
    PruneExpired(now);
    for (auto& [group, template_node] : templates) node_groups_.Record(group, std::move(template_node), now, trusted);
  }

  std::map<std::string, NodeGroupTemplate> NodeGroups() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return node_groups_.Live(clock_.Now());
  }

  std::shared_ptr<const std::vector<decision::Intent>> IntentsView() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return intents_view_.Get(clock_.Now(),
                             [&] { return std::vector<decision::Intent>(intents_.begin(), intents_.end()); });
  }

 private:
  using Index = std::set<std::pair<absl::Time, std::string>>;

  // Expired entries are dropped as new ones arrive, so memory follows the live demand: preferences from the
  // least recently seen on, so only what expires is visited. Called with mu_ held.
  void PruneExpired(absl::Time now) {
    for (auto oldest = recency_.LeastRecentlySeen(); oldest && now - oldest->first > preference_ttl_;
         oldest = recency_.LeastRecentlySeen()) {
      Erase(preferences_.find(oldest->second));
    }
    const auto expired = [&](const decision::Intent& intent) { return now - intent.recorded > intent_ttl_; };
    if (std::erase_if(intents_, expired) > 0) intents_view_.Invalidate();
    node_groups_.Prune(now);
  }

  void Unindex(const decision::Preference& preference) {
    recency_.Remove(preference);
    by_first_seen_.erase({preference.first_seen, preference.pod_uid});
  }

  void Erase(std::map<std::string, decision::Preference>::iterator it) {
    if (it == preferences_.end()) return;
    Unindex(it->second);
    preferences_.erase(it);
  }

  const server::Clock& clock_;
  const absl::Duration preference_ttl_;
  const absl::Duration intent_ttl_;
  const LedgerLimits limits_;
  mutable std::mutex mu_;
  std::map<std::string, decision::Preference> preferences_;  // by pod uid
  PreferenceRecency recency_;  // expiry and eviction order
  Index by_first_seen_;  // (first_seen, uid): the order Preferences() returns, ties by uid
  std::deque<decision::Intent> intents_;  // in recording order, hence oldest first
  mutable IntentsViewCache intents_view_;
  NodeGroupTemplates node_groups_;
};

}  // namespace

std::unique_ptr<Ledger> NewInMemoryLedger(const server::Clock& clock, Lifetimes lifetimes, LedgerLimits limits) {
  return std::make_unique<InMemoryLedger>(clock, lifetimes.preference, lifetimes.intent, std::move(limits));
}

}  // namespace topofit::ledger
