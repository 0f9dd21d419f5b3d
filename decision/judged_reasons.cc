#include "decision/judged_reasons.h"

#include "decision/pod_filter.h"

namespace topofit::decision {

std::string JudgedReasons::For(const NodeVerdict& verdict, const NodeGpuSnapshot& node) {
  if (verdict.refusal == Refusal::kAskingForCapacity || verdict.refusal == Refusal::kHeldForScaleUp ||
      verdict.refusal == Refusal::kWaitingForCapacity) {
    return JudgedReasonText(verdict, pod_, node, holds_, ask_);
  }
  std::vector<std::pair<std::string, std::string>>& by_origin = texts_[Shape{node.topology.get(), node.free().mask()}];
  for (const auto& [origin, text] : by_origin) {
    if (origin == node.topology_origin) return text;
  }
  return by_origin.emplace_back(node.topology_origin, JudgedReasonText(verdict, pod_, node, holds_, ask_)).second;
}

}  // namespace topofit::decision
