#include "ledger/ledger.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace topofit::ledger {
namespace {

class InMemoryLedger final : public Ledger {
 public:
  InMemoryLedger(const server::Clock& clock, absl::Duration preference_ttl, absl::Duration intent_ttl)
      : clock_(clock), preference_ttl_(preference_ttl), intent_ttl_(intent_ttl) {}

  void RecordPreference(decision::Preference preference) override {
    std::lock_guard<std::mutex> lock(mu_);
    const absl::Time now = clock_.Now();
    PruneExpired(now);
    preference.last_seen = now;
    auto it = preferences_.find(preference.pod_uid);
    preference.first_seen = it == preferences_.end() ? now : it->second.first_seen;
    preferences_[preference.pod_uid] = std::move(preference);
  }

  void ForgetPod(const std::string& pod_uid) override {
    std::lock_guard<std::mutex> lock(mu_);
    preferences_.erase(pod_uid);
    for (decision::Intent& intent : intents_) {
      std::erase(intent.pod_uids, pod_uid);
      intent.pod_gpus.erase(pod_uid);
    }
    std::erase_if(intents_, [](const decision::Intent& intent) { return intent.pod_uids.empty(); });
  }

  std::vector<decision::Preference> Preferences() const override {
    std::lock_guard<std::mutex> lock(mu_);
    const absl::Time now = clock_.Now();
    std::vector<decision::Preference> out;
    for (const auto& [uid, preference] : preferences_) {
      if (now - preference.last_seen <= preference_ttl_) out.push_back(preference);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const decision::Preference& a, const decision::Preference& b) { return a.first_seen < b.first_seen; });
    return out;
  }

  void RecordIntent(decision::Intent intent) override {
    std::lock_guard<std::mutex> lock(mu_);
    intent.recorded = clock_.Now();
    PruneExpired(intent.recorded);
    intents_.push_back(std::move(intent));
  }

  std::vector<decision::Intent> Intents() const override {
    std::lock_guard<std::mutex> lock(mu_);
    const absl::Time now = clock_.Now();
    std::vector<decision::Intent> out;
    for (const decision::Intent& intent : intents_) {
      if (now - intent.recorded <= intent_ttl_) out.push_back(intent);
    }
    return out;
  }

 private:
  // Expired entries are dropped as new ones arrive, so memory follows the live demand. Called with mu_ held.
  void PruneExpired(absl::Time now) {
    std::erase_if(preferences_, [&](const auto& entry) { return now - entry.second.last_seen > preference_ttl_; });
    std::erase_if(intents_, [&](const decision::Intent& intent) { return now - intent.recorded > intent_ttl_; });
  }

  const server::Clock& clock_;
  const absl::Duration preference_ttl_;
  const absl::Duration intent_ttl_;
  mutable std::mutex mu_;
  std::map<std::string, decision::Preference> preferences_;  // by pod uid: ordered, so ties sort by uid
  std::vector<decision::Intent> intents_;                    // in recording order, hence oldest first
};

}  // namespace

std::unique_ptr<Ledger> NewInMemoryLedger(const server::Clock& clock, absl::Duration preference_ttl,
                                          absl::Duration intent_ttl) {
  return std::make_unique<InMemoryLedger>(clock, preference_ttl, intent_ttl);
}

}  // namespace topofit::ledger
