#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "decision/intent.h"
#include "decision/preference.h"
#include "server/clock.h"

namespace topofit::ledger {

// Preferences and intents, shared by the extender and the expander. In one process (`topofit serve`,
// the bench) it is memory; across processes it will live in the Kubernetes API behind the same interface.
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
  virtual std::vector<decision::Intent> Intents() const = 0;
};

// The clock decides expiry: a preference not refreshed within `preference_ttl` (its pod is gone or no
// longer asks) and an intent older than `intent_ttl` (the capacity came, or never will) are dropped.
std::unique_ptr<Ledger> NewInMemoryLedger(const server::Clock& clock, absl::Duration preference_ttl,
                                          absl::Duration intent_ttl);

}  // namespace topofit::ledger
