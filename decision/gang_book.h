#pragma once

// The reservations that make a gang all or nothing with kube-scheduler's one-pod-at-a-time verbs: the
// first member's filter reserves a place for every member (gang_placement.h); each later member's filter
// joins one of the places and is steered to its node; no member binds until every place is joined; a
// reservation not fully bound within its bound is dropped and its GPUs are free again. A data structure
// over time given by the caller (no clock): the extender and the replay keep one each. Not thread-safe.
// Docs: docs/gangs.md, "All-or-nothing placement".

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "decision/gang.h"
#include "decision/gang_placement.h"
#include "topology/gpu_set.h"

namespace topofit::decision {

// One member's reserved place.
struct GangSlot {
  std::string node;
  topology::GpuSet gpus;
  std::string pod_uid;  // the member that joined it; empty while open
  bool bound = false;   // the member is bound: its GPUs are the pod's now, not the reservation's
  friend bool operator==(const GangSlot&, const GangSlot&) = default;
};

struct GangReservation {
  std::string gang;
  std::optional<GangLevel> level;
  std::optional<NvlinkDomain> domain;
  std::vector<GangSlot> slots;
  absl::Time reserved_at;
  absl::Time expires_at;

  int joined() const;
  int bound() const;
  bool complete() const { return joined() == static_cast<int>(slots.size()); }
};

struct GangBookOptions {
  // How long a reservation waits for every member to join. kube-scheduler retries an unschedulable pod
  // within its maximum backoff (10 s by default) and reaches every member of a gang that fits in seconds;
  // this bounds the GPUs a gang whose members never all come (a quota, a deleted Job) holds idle.
  absl::Duration wait = absl::Minutes(2);
  // Once every member joined, how long the binds may take before the reservation is dropped.
  absl::Duration bind_grace = absl::Minutes(1);
  // Reservations held at once; more are refused (the gang waits), never an older one evicted.
  size_t max_reservations = 4096;
  // Gangs remembered as landed (every member bound), so later pods of theirs place as single pods.
  size_t landed_remembered = 16384;
};

class GangBook {
 public:
  explicit GangBook(GangBookOptions options = {}) : options_(options) {}

  const GangReservation* Find(absl::string_view gang) const;
  // Whether every member of the gang was bound through a reservation (remembered for the latest
  // `landed_remembered` gangs).
  bool Landed(absl::string_view gang) const;

  // Holds `placement` for the gang until now + wait. FailedPrecondition when it holds one already;
  // ResourceExhausted at max_reservations.
  absl::Status Reserve(absl::string_view gang, const GangPlacement& placement, absl::Time now);

  // The member's place: the one it joined before, else the first open one whose node `usable` accepts
  // (kube-scheduler offers the pod only the nodes its own filters pass). nullopt when the gang holds no
  // reservation, or none of its open places is usable. The last member to join starts the bind grace.
  template <typename Usable>
  std::optional<GangSlot> Join(absl::string_view gang, const std::string& pod_uid, Usable usable, absl::Time now);
  // The member's place, when it joined one.
  std::optional<GangSlot> SlotOf(const std::string& pod_uid) const;

  // The member is bound. When every member is, the reservation ends and the gang is landed: true then.
  bool Bound(const std::string& pod_uid);
  // The pod is gone: its place opens again for a pod that replaces it.
  void Left(const std::string& pod_uid);
  // Drops the gang's reservation (its places could not be bound: another pod took their GPUs).
  void Cancel(absl::string_view gang);
  // Drops every reservation past its time and returns them. Cheap when none is: every filter calls it.
  std::vector<GangReservation> Expire(absl::Time now);

  // GPUs on `node` held for gangs other than `except`, by places not bound yet.
  topology::GpuSet ReservedOn(absl::string_view node, absl::string_view except = {}) const;
  size_t size() const { return reservations_.size(); }

 private:
  GangSlot* MutableSlotOf(const std::string& pod_uid);
  void Erase(std::map<std::string, GangReservation, std::less<>>::iterator it);
  void JoinAt(GangReservation& reservation, size_t slot, const std::string& pod_uid, absl::Time now);
  void SetExpiry(GangReservation& reservation, absl::Time expires_at);

  GangBookOptions options_;
  std::map<std::string, GangReservation, std::less<>> reservations_;
  std::set<std::pair<absl::Time, std::string>> by_expiry_;  // (expires_at, gang) of every reservation
  std::map<std::string, std::set<std::string>, std::less<>> gangs_on_node_;  // node -> gangs with places there
  std::map<std::string, std::string> gang_of_member_;                        // pod uid -> gang
  std::set<std::string, std::less<>> landed_;
  std::deque<std::string> landed_order_;
};

template <typename Usable>
std::optional<GangSlot> GangBook::Join(absl::string_view gang, const std::string& pod_uid, Usable usable,
                                       absl::Time now) {
  if (std::optional<GangSlot> joined = SlotOf(pod_uid)) return joined;
  auto it = reservations_.find(gang);
  if (it == reservations_.end()) return std::nullopt;
  std::vector<GangSlot>& slots = it->second.slots;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].pod_uid.empty() && usable(absl::string_view(slots[i].node))) {
      JoinAt(it->second, i, pod_uid, now);
      return slots[i];
    }
  }
  return std::nullopt;
}

}  // namespace topofit::decision
