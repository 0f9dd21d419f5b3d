#include "history/pod_events.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "history/explain.h"

namespace topofit::history {
namespace {

constexpr std::array<absl::string_view, 5> kReasons = {"RefusedForTopology", "CapacityRequested", "CapacityHeld",
                                                        "GpusAssigned", "RestartDiagnosed"};
constexpr std::array<absl::string_view, 5> kActions = {"Filter", "RequestCapacity", "HoldCapacity", "Bind",
                                                       "DiagnoseRestart"};

bool RefusedForTopology(const Candidate& c) {
  return c.reason == Reason::kMinLink || c.reason == Reason::kMinBandwidth;
}

// The kind of Event a record is, if any.
std::optional<PodEventKind> EventKindOf(const Record& r) {
  switch (r.kind) {
    case Kind::kFilter:
      if (r.reason != Reason::kNoNodeFits || r.gpus <= 0) return std::nullopt;
      if (std::none_of(r.candidates.begin(), r.candidates.end(), RefusedForTopology)) return std::nullopt;
      return PodEventKind::kRefusedForTopology;
    case Kind::kCapacityRequested:
      return PodEventKind::kCapacityRequested;
    case Kind::kIntent:
      return PodEventKind::kCapacityHeld;
    case Kind::kBind:
      if (r.reason != Reason::kBound) return std::nullopt;
      return PodEventKind::kGpusAssigned;
    case Kind::kRestart:
      return PodEventKind::kRestartDiagnosed;
    default:
      return std::nullopt;
  }
}

}  // namespace

absl::string_view PodEventReason(PodEventKind kind) { return kReasons[static_cast<size_t>(kind)]; }
absl::string_view PodEventAction(PodEventKind kind) { return kActions[static_cast<size_t>(kind)]; }
bool IsWarning(PodEventKind kind) {
  return kind == PodEventKind::kRefusedForTopology || kind == PodEventKind::kRestartDiagnosed;
}

std::string TruncateUtf8(std::string text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  // Back off continuation bytes (10xxxxxx): the cut then falls before the character they belong to.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  text.resize(end);
  return text;
}

std::vector<PodEvent> PodEventsOf(const Record& record) {
  const std::optional<PodEventKind> kind = EventKindOf(record);
  if (!kind) return {};
  // DescribeRecord's line; a refusal's names the refused nodes with the best set each could reach.
  std::string note = DescribeRecord(record);
  constexpr absl::string_view kFilterPrefix = "filter: ";
  if (absl::StartsWith(note, kFilterPrefix)) note.erase(0, kFilterPrefix.size());
  note = TruncateUtf8(std::move(note), kMaxEventNoteBytes);
  std::vector<PodEvent> events;
  for (const PodSubject& pod : record.pods) {
    const size_t slash = pod.key.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == pod.key.size()) continue;
    events.push_back(PodEvent{*kind, pod.key.substr(0, slash), pod.key.substr(slash + 1), pod.uid, note});
  }
  return events;
}

}  // namespace topofit::history
