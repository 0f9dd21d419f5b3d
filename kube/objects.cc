#include "kube/objects.h"

namespace topofit::kube {

// Upstream compares these strings exactly (case-sensitive), so this does too.

ContainerRestartPolicy ParseContainerRestartPolicy(absl::string_view value) {
  if (value.empty()) return ContainerRestartPolicy::kUnset;
  if (value == "Always") return ContainerRestartPolicy::kAlways;
  if (value == "OnFailure") return ContainerRestartPolicy::kOnFailure;
  if (value == "Never") return ContainerRestartPolicy::kNever;
  return ContainerRestartPolicy::kUnknown;
}

NodeSelectorOperator ParseNodeSelectorOperator(absl::string_view value) {
  if (value == "In") return NodeSelectorOperator::kIn;
  if (value == "NotIn") return NodeSelectorOperator::kNotIn;
  if (value == "Exists") return NodeSelectorOperator::kExists;
  if (value == "DoesNotExist") return NodeSelectorOperator::kDoesNotExist;
  if (value == "Gt") return NodeSelectorOperator::kGt;
  if (value == "Lt") return NodeSelectorOperator::kLt;
  return NodeSelectorOperator::kUnknown;
}

TaintEffect ParseTaintEffect(absl::string_view value) {
  if (value.empty()) return TaintEffect::kNone;
  if (value == "NoSchedule") return TaintEffect::kNoSchedule;
  if (value == "PreferNoSchedule") return TaintEffect::kPreferNoSchedule;
  if (value == "NoExecute") return TaintEffect::kNoExecute;
  return TaintEffect::kUnknown;
}

absl::string_view TaintEffectName(TaintEffect effect) {
  switch (effect) {
    case TaintEffect::kNone: return "";
    case TaintEffect::kNoSchedule: return "NoSchedule";
    case TaintEffect::kPreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::kNoExecute: return "NoExecute";
    case TaintEffect::kUnknown: break;
  }
  return "Unknown";
}

TolerationOperator ParseTolerationOperator(absl::string_view value) {
  if (value.empty() || value == "Equal") return TolerationOperator::kEqual;
  if (value == "Exists") return TolerationOperator::kExists;
  return TolerationOperator::kUnknown;
}

bool NodeIsReady(const Node& node) {
  for (const Condition& condition : node.status.conditions) {
    if (condition.type == "Ready") return condition.status == "True";
  }
  return true;
}

}  // namespace topofit::kube
