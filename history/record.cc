#include "history/record.h"

#include <array>

#include "absl/strings/str_cat.h"
#include "topology/link.h"

namespace topofit::history {
namespace {

constexpr std::array<absl::string_view, 6> kComponentNames = {"extender", "expander", "provisioner", "agent",
                                                              "restarts", "headroom"};
static_assert(kComponentNames.size() == static_cast<size_t>(Component::kHeadroom) + 1);
constexpr std::array<absl::string_view, 14> kKindNames = {
    "filter",          "bind", "preference", "ranking", "intent", "capacity-requested", "capacity-withdrawn",
    "gang", "idle", "preferred-allocation", "allocation", "restart", "capacity-status", "headroom"};
static_assert(kKindNames.size() == static_cast<size_t>(kLastKind) + 1);
// Past the refusals (named by decision::RefusalCode), in enum order from kTopologyUnknown.
constexpr std::array<absl::string_view, 20> kOutcomeNames = {
    "topology-unknown", "node-unknown", "invalid-pod", "no-node-fits", "bound", "bind-failed", "chosen",
    "group-would-strand", "fewer-preferences", "higher-cost-per-useful-gpu", "fewer-pods-placed",
    "passed-through", "vetoed", "as-chosen", "allocator-fallback", "other-devices", "unmatched",
    "gang-reserved", "gang-no-room", "gang-waiting"};
constexpr int kFirstOutcome = static_cast<int>(Reason::kTopologyUnknown);
constexpr Reason kLastOutcome = Reason::kGangWaiting;
static_assert(kFirstOutcome + kOutcomeNames.size() == static_cast<size_t>(kLastOutcome) + 1);
constexpr int kFirstIdle = static_cast<int>(Reason::kIdleBooting);
static_assert(kFirstIdle == static_cast<int>(kLastOutcome) + 1);
static_assert(kFirstIdle + kIdleReasons == static_cast<size_t>(Reason::kIdleNoDemand) + 1);
constexpr int kFirstRestart = static_cast<int>(Reason::kRestartGpuFault);
static_assert(kFirstRestart == static_cast<int>(Reason::kIdleNoDemand) + 1);
static_assert(kFirstRestart + static_cast<int>(decision::RestartCause::kUnknown) == static_cast<int>(Reason::kRestartUnknown));
constexpr int kFirstCapacity = static_cast<int>(Reason::kCapacityNotFound);
static_assert(kFirstCapacity == static_cast<int>(Reason::kRestartUnknown) + 1);
constexpr std::array<absl::string_view, 4> kCapacityNames = {"capacity-not-found", "capacity-failed",
                                                              "booking-expired", "capacity-revoked"};
static_assert(kFirstCapacity + kCapacityNames.size() == static_cast<size_t>(Reason::kCapacityRevoked) + 1);
constexpr int kFirstHeadroom = static_cast<int>(Reason::kHeadroomGrew);
constexpr std::array<absl::string_view, 2> kHeadroomNames = {"headroom-grew", "headroom-shrank"};
constexpr Reason kLastReason = Reason::kHeadroomShrank;
static_assert(kFirstHeadroom + kHeadroomNames.size() == static_cast<size_t>(kLastReason) + 1);

template <typename Enum, size_t N>
absl::StatusOr<Enum> ParseName(absl::string_view name, const std::array<absl::string_view, N>& names,
                               absl::string_view what) {
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown ", what, " '", name, "'"));
}

}  // namespace

// Both enums expand one list after their first enumerator, so they agree value for value by construction.
#define TOPOFIT_SAME_REFUSAL(enumerator, code) \
  static_assert(static_cast<int>(decision::Refusal::enumerator) == static_cast<int>(Reason::enumerator));
TOPOFIT_NODE_REFUSALS(TOPOFIT_SAME_REFUSAL)
#undef TOPOFIT_SAME_REFUSAL

Reason ReasonOf(decision::Refusal refusal) { return static_cast<Reason>(refusal); }

std::optional<decision::Refusal> RefusalOf(Reason reason) {
  if (reason == Reason::kFits || static_cast<int>(reason) >= kFirstOutcome) return std::nullopt;
  return static_cast<decision::Refusal>(reason);
}

Reason ReasonOfIdle(IdleReason reason) { return static_cast<Reason>(kFirstIdle + static_cast<int>(reason)); }
Reason ReasonOfRestart(decision::RestartCause cause) {
  return static_cast<Reason>(kFirstRestart + static_cast<int>(cause));
}

absl::string_view ComponentName(Component component) { return kComponentNames[static_cast<size_t>(component)]; }
absl::string_view KindName(Kind kind) { return kKindNames[static_cast<size_t>(kind)]; }

absl::string_view ReasonName(Reason reason) {
  const int i = static_cast<int>(reason);
  if (reason == Reason::kFits) return "fits";
  if (i < kFirstOutcome) return decision::RefusalCode(static_cast<decision::Refusal>(i));
  if (i >= kFirstHeadroom) return kHeadroomNames[i - kFirstHeadroom];
  if (i >= kFirstCapacity) return kCapacityNames[i - kFirstCapacity];
  if (i >= kFirstRestart) return decision::RestartCauseName(static_cast<decision::RestartCause>(i - kFirstRestart));
  if (i >= kFirstIdle) return IdleReasonName(static_cast<IdleReason>(i - kFirstIdle));
  return kOutcomeNames[i - kFirstOutcome];
}

absl::StatusOr<Component> ParseComponent(absl::string_view name) {
  return ParseName<Component>(name, kComponentNames, "component");
}
absl::StatusOr<Kind> ParseKind(absl::string_view name) { return ParseName<Kind>(name, kKindNames, "decision kind"); }

absl::StatusOr<Reason> ParseReason(absl::string_view name) {
  for (int i = 0; i <= static_cast<int>(kLastReason); ++i) {
    if (ReasonName(static_cast<Reason>(i)) == name) return static_cast<Reason>(i);
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown reason code '", name, "'"));
}

TopologyDetail DetailOf(const topology::Allocation& allocation) {
  return TopologyDetail{allocation.gpus.ToString(), std::string(topology::LinkClassName(allocation.quality.weakest)),
                        allocation.quality.bandwidth_mbps};
}

}  // namespace topofit::history
