#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "decision/intent.h"

namespace topofit::ledger {

// The unexpired intents as one immutable snapshot that every filter shares (Ledger::IntentsView): kept
// until an intent changes (Invalidate) or the oldest intent in it expires, so a filter neither copies nor
// regroups the ledger's intents. Not thread-safe: the ledger calls it under its lock.
class IntentsViewCache {
 public:
  explicit IntentsViewCache(absl::Duration intent_ttl) : intent_ttl_(intent_ttl) {}

  void Invalidate() { view_.reset(); }

  // The snapshot at `now`; `all` is called to list every stored intent, oldest first, when it is rebuilt.
  template <typename ListAll>
  std::shared_ptr<const std::vector<decision::Intent>> Get(absl::Time now, ListAll all) {
    if (view_ != nullptr && now <= valid_until_) return view_;
    std::vector<decision::Intent> live = all();
    std::erase_if(live, [&](const decision::Intent& intent) { return now - intent.recorded > intent_ttl_; });
    valid_until_ = absl::InfiniteFuture();
    for (const decision::Intent& intent : live) valid_until_ = std::min(valid_until_, intent.recorded + intent_ttl_);
    view_ = std::make_shared<const std::vector<decision::Intent>>(std::move(live));
    return view_;
  }

 private:
  const absl::Duration intent_ttl_;
  std::shared_ptr<const std::vector<decision::Intent>> view_;
  absl::Time valid_until_;
};

}  // namespace topofit::ledger
