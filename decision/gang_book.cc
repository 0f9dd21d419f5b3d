#include "decision/gang_book.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace topofit::decision {

int GangReservation::joined() const {
  return static_cast<int>(std::count_if(slots.begin(), slots.end(), [](const GangSlot& s) { return !s.pod_uid.empty(); }));
}

int GangReservation::bound() const {
  return static_cast<int>(std::count_if(slots.begin(), slots.end(), [](const GangSlot& s) { return s.bound; }));
}

const GangReservation* GangBook::Find(absl::string_view gang) const {
  auto it = reservations_.find(gang);
  return it == reservations_.end() ? nullptr : &it->second;
}

bool GangBook::Landed(absl::string_view gang) const { return landed_.find(gang) != landed_.end(); }

absl::Status GangBook::Reserve(absl::string_view gang, const GangPlacement& placement, absl::Time now) {
  if (reservations_.find(gang) != reservations_.end()) {
    return absl::FailedPreconditionError(absl::StrCat("gang ", gang, " holds a reservation already"));
  }
  if (reservations_.size() >= options_.max_reservations) {
    return absl::ResourceExhaustedError(
        absl::StrCat(reservations_.size(), " gang reservations are held, the most allowed; gang ", gang, " waits"));
  }
  GangReservation reservation{.gang = std::string(gang),
                              .level = placement.level,
                              .domain = placement.domain,
                              .slots = {},
                              .reserved_at = now,
                              .expires_at = now + options_.wait};
  by_expiry_.emplace(reservation.expires_at, reservation.gang);
  for (const GangSlotPlacement& place : placement.slots) {
    reservation.slots.push_back(GangSlot{.node = place.node, .gpus = place.gpus, .pod_uid = {}, .bound = false});
    gangs_on_node_[place.node].insert(std::string(gang));
  }
  // A gang that lands again (a new attempt) is a gang with a reservation, not a landed one.
  if (auto landed = landed_.find(gang); landed != landed_.end()) landed_.erase(landed);
  reservations_.emplace(std::string(gang), std::move(reservation));
  return absl::OkStatus();
}

void GangBook::JoinAt(GangReservation& reservation, size_t slot, const std::string& pod_uid, absl::Time now) {
  reservation.slots[slot].pod_uid = pod_uid;
  gang_of_member_[pod_uid] = reservation.gang;
  if (reservation.complete()) SetExpiry(reservation, now + options_.bind_grace);
}

void GangBook::SetExpiry(GangReservation& reservation, absl::Time expires_at) {
  by_expiry_.erase({reservation.expires_at, reservation.gang});
  reservation.expires_at = expires_at;
  by_expiry_.emplace(expires_at, reservation.gang);
}

std::optional<GangSlot> GangBook::SlotOf(const std::string& pod_uid) const {
  auto member = gang_of_member_.find(pod_uid);
  if (member == gang_of_member_.end()) return std::nullopt;
  const GangReservation& reservation = reservations_.find(member->second)->second;
  for (const GangSlot& slot : reservation.slots) {
    if (slot.pod_uid == pod_uid) return slot;
  }
  return std::nullopt;
}

GangSlot* GangBook::MutableSlotOf(const std::string& pod_uid) {
  auto member = gang_of_member_.find(pod_uid);
  if (member == gang_of_member_.end()) return nullptr;
  for (GangSlot& slot : reservations_.find(member->second)->second.slots) {
    if (slot.pod_uid == pod_uid) return &slot;
  }
  return nullptr;
}

bool GangBook::Bound(const std::string& pod_uid) {
  GangSlot* slot = MutableSlotOf(pod_uid);
  if (slot == nullptr) return false;
  slot->bound = true;
  auto it = reservations_.find(gang_of_member_[pod_uid]);
  if (it->second.bound() < static_cast<int>(it->second.slots.size())) return false;
  landed_.insert(it->first);
  landed_order_.push_back(it->first);
  while (landed_order_.size() > options_.landed_remembered) {
    landed_.erase(landed_order_.front());
    landed_order_.pop_front();
  }
  Erase(it);
  return true;
}

void GangBook::Left(const std::string& pod_uid) {
  GangSlot* slot = MutableSlotOf(pod_uid);
  if (slot == nullptr) return;
  slot->pod_uid.clear();
  slot->bound = false;
  gang_of_member_.erase(pod_uid);
}

void GangBook::Cancel(absl::string_view gang) {
  auto it = reservations_.find(gang);
  if (it != reservations_.end()) Erase(it);
}

std::vector<GangReservation> GangBook::Expire(absl::Time now) {
  std::vector<GangReservation> expired;
  while (!by_expiry_.empty() && by_expiry_.begin()->first <= now) {
    auto it = reservations_.find(by_expiry_.begin()->second);
    expired.push_back(it->second);
    Erase(it);
  }
  return expired;
}

topology::GpuSet GangBook::ReservedOn(absl::string_view node, absl::string_view except) const {
  topology::GpuSet reserved;
  auto gangs = gangs_on_node_.find(node);
  if (gangs == gangs_on_node_.end()) return reserved;
  for (const std::string& gang : gangs->second) {
    if (gang == except) continue;
    for (const GangSlot& slot : reservations_.find(gang)->second.slots) {
      if (slot.node == node && !slot.bound) reserved = reserved | slot.gpus;
    }
  }
  return reserved;
}

void GangBook::Erase(std::map<std::string, GangReservation, std::less<>>::iterator it) {
  for (const GangSlot& slot : it->second.slots) {
    if (!slot.pod_uid.empty()) gang_of_member_.erase(slot.pod_uid);
    auto on_node = gangs_on_node_.find(slot.node);
    if (on_node == gangs_on_node_.end()) continue;
    on_node->second.erase(it->first);
    if (on_node->second.empty()) gangs_on_node_.erase(on_node);
  }
  by_expiry_.erase({it->second.expires_at, it->first});
  reservations_.erase(it);
}

}  // namespace topofit::decision
