#include "decision/refusal.h"

#include "absl/strings/str_cat.h"
#include "topology/allocator.h"

namespace topofit::decision {
namespace {

std::string Shortfall(topology::Insufficiency::Kind kind, const RefusalFacts& facts) {
  return absl::StrCat(topology::ShortfallText({kind, facts.requested, facts.available}),
                      facts.unresolvable ? " even when empty" : "");
}

}  // namespace

absl::string_view RefusalCode(Refusal refusal) {
#define TOPOFIT_REFUSAL_CODE_CASE(enumerator, code) \
  case Refusal::enumerator:                         \
    return code;
  switch (refusal) {
    case Refusal::kNone:
      return "";
      TOPOFIT_NODE_REFUSALS(TOPOFIT_REFUSAL_CODE_CASE)
  }
#undef TOPOFIT_REFUSAL_CODE_CASE
  return "";
}

std::string Rfc3339Text(absl::Time time) { return absl::FormatTime(absl::RFC3339_sec, time, absl::UTCTimeZone()); }

std::string RefusalText(const RefusalFacts& facts, absl::FunctionRef<std::string(absl::Time)> time_text) {
  switch (facts.refusal) {
    case Refusal::kNone:
      return "";
    case Refusal::kNodeSize:
      return absl::StrCat("needs ", facts.requested, " GPUs, the node has ", facts.available);
    case Refusal::kGpuCount:
      return Shortfall(topology::Insufficiency::Kind::kGpuCount, facts);
    case Refusal::kMinLink:
      return Shortfall(topology::Insufficiency::Kind::kMinLink, facts);
    case Refusal::kMinBandwidth:
      return Shortfall(topology::Insufficiency::Kind::kMinBandwidth, facts);
    case Refusal::kHeldForScaleUp: {
      std::string text = absl::StrCat(facts.held_gpus, " of the node's ", facts.free_gpus,
                                      " free GPUs are held for the pods a scale-up brought it for");
      if (facts.held_until) {
        absl::StrAppend(&text, "; this pod is held back until ", time_text(*facts.held_until));
      }
      return text;
    }
    case Refusal::kWaitingForCapacity:
      return "the node gives a poorer set than the capacity scaled up for the pod, which it waits for";
    case Refusal::kAskingForCapacity:
      return "the node gives a poorer set than capacity the pod asked for, which it waits for";
  }
  return "";
}

}  // namespace topofit::decision
