#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "decision/preference.h"

namespace topofit::ledger {

// The order in which the ledger's preferences expire and make room at its cap, shared by the in-memory and
// the API ledger. Expiry takes the least recently seen. Room is made first among the preferences seen only
// once: kube-scheduler asks again for a real pending pod on every retry, so its preference is renewed
// within minutes, while a flood of invented pods sent once each (anyone who reaches /filter can invent
// them) is never renewed and evicts only its own. When every preference has been renewed, the least
// recently seen makes room. Not thread-safe: the ledger calls it under its lock.
class PreferenceRecency {
 public:
  // Index `preference` by its last_seen; Remove it with the same times before they change.
  void Add(const decision::Preference& preference) { TierOf(preference).emplace(Key(preference)); }
  void Remove(const decision::Preference& preference) { TierOf(preference).erase(Key(preference)); }

  // The least recently seen preference's uid and last_seen: the next to expire.
  std::optional<std::pair<absl::Time, std::string>> LeastRecentlySeen() const {
    if (seen_once_.empty() && renewed_.empty()) return std::nullopt;
    if (seen_once_.empty()) return *renewed_.begin();
    if (renewed_.empty()) return *seen_once_.begin();
    return std::min(*seen_once_.begin(), *renewed_.begin());
  }
  // The uid of the preference that makes room at the cap.
  std::optional<std::string> NextEvicted() const {
    if (!seen_once_.empty()) return seen_once_.begin()->second;
    if (!renewed_.empty()) return renewed_.begin()->second;
    return std::nullopt;
  }
  size_t size() const { return seen_once_.size() + renewed_.size(); }

 private:
  using Index = std::set<std::pair<absl::Time, std::string>>;  // (last_seen, uid)

  static std::pair<absl::Time, std::string> Key(const decision::Preference& preference) {
    return {preference.last_seen, preference.pod_uid};
  }
  Index& TierOf(const decision::Preference& preference) {
    return preference.last_seen > preference.first_seen ? renewed_ : seen_once_;
  }

  Index seen_once_;
  Index renewed_;
};

}  // namespace topofit::ledger
