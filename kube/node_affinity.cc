#include "kube/node_affinity.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"

namespace topofit::kube {
namespace {

// strconv.ParseInt(s, 10, 64): an optional sign and decimal digits, nothing else (absl::SimpleAtoi
// alone would also accept surrounding spaces).
std::optional<int64_t> ParseInt64(absl::string_view text) {
  const size_t first_digit = (!text.empty() && (text[0] == '+' || text[0] == '-')) ? 1 : 0;
  if (first_digit == text.size()) return std::nullopt;
  for (size_t i = first_digit; i < text.size(); ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) return std::nullopt;  // out of range
  return value;
}

bool Contains(const std::vector<std::string>& values, absl::string_view value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

// labels.NewRequirement's checks: a requirement that fails them is a parse error upstream, and a term
// holding one matches no node. (Upstream also validates the key and values as label syntax; the API
// server has done so for every pod that reaches us, so that is not repeated here.)
bool IsWellFormedLabelRequirement(const NodeSelectorRequirement& requirement) {
  switch (requirement.op) {
    case NodeSelectorOperator::kIn:
    case NodeSelectorOperator::kNotIn:
      return !requirement.values.empty();
    case NodeSelectorOperator::kExists:
    case NodeSelectorOperator::kDoesNotExist:
      return requirement.values.empty();
    case NodeSelectorOperator::kGt:
    case NodeSelectorOperator::kLt:
      return requirement.values.size() == 1 && ParseInt64(requirement.values[0]).has_value();
    case NodeSelectorOperator::kUnknown:
      return false;
  }
  return false;
}

bool MatchesLabels(const NodeSelectorRequirement& requirement, const StringMap& labels) {
  const auto label = labels.find(requirement.key);
  const bool has = label != labels.end();
  switch (requirement.op) {
    case NodeSelectorOperator::kIn:
      return has && Contains(requirement.values, label->second);
    case NodeSelectorOperator::kNotIn:
      return !has || !Contains(requirement.values, label->second);
    case NodeSelectorOperator::kExists:
      return has;
    case NodeSelectorOperator::kDoesNotExist:
      return !has;
    case NodeSelectorOperator::kGt:
    case NodeSelectorOperator::kLt: {
      if (!has) return false;
      const std::optional<int64_t> node_value = ParseInt64(label->second);
      const std::optional<int64_t> bound = ParseInt64(requirement.values[0]);
      if (!node_value || !bound) return false;
      return requirement.op == NodeSelectorOperator::kGt ? *node_value > *bound : *node_value < *bound;
    }
    case NodeSelectorOperator::kUnknown:
      return false;
  }
  return false;
}

// Field selectors support In and NotIn with exactly one value (OneTermEqualSelector /
// OneTermNotEqualSelector).
bool IsWellFormedFieldRequirement(const NodeSelectorRequirement& requirement) {
  return (requirement.op == NodeSelectorOperator::kIn || requirement.op == NodeSelectorOperator::kNotIn) &&
         requirement.values.size() == 1;
}

// A node's only selectable field is metadata.name; any other field reads as "", as fields.Set.Get does.
bool MatchesFields(const NodeSelectorRequirement& requirement, const Node& node) {
  const absl::string_view field = requirement.key == "metadata.name" ? absl::string_view(node.metadata.name) : "";
  const bool equal = field == requirement.values[0];
  return requirement.op == NodeSelectorOperator::kIn ? equal : !equal;
}

bool MatchesTerm(const NodeSelectorTerm& term, const Node& node) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  // Parse errors first: upstream rejects a term with a malformed requirement as a whole, even when
  // another of its requirements already fails to match.
  for (const NodeSelectorRequirement& requirement : term.match_expressions) {
    if (!IsWellFormedLabelRequirement(requirement)) return false;
  }
  for (const NodeSelectorRequirement& requirement : term.match_fields) {
    if (!IsWellFormedFieldRequirement(requirement)) return false;
  }
  for (const NodeSelectorRequirement& requirement : term.match_expressions) {
    if (!MatchesLabels(requirement, node.metadata.labels)) return false;
  }
  // Upstream skips field requirements when the node has no fields, i.e. no name.
  if (node.metadata.name.empty()) return true;
  for (const NodeSelectorRequirement& requirement : term.match_fields) {
    if (!MatchesFields(requirement, node)) return false;
  }
  return true;
}

}  // namespace

bool MatchesAnyTerm(const std::vector<NodeSelectorTerm>& terms, const Node& node) {
  return std::any_of(terms.begin(), terms.end(), [&](const NodeSelectorTerm& term) { return MatchesTerm(term, node); });
}

bool MatchesNodeSelector(const Pod& pod, const Node& node) {
  for (const auto& [key, value] : pod.spec.node_selector) {
    const auto label = node.metadata.labels.find(key);
    if (label == node.metadata.labels.end() || label->second != value) return false;
  }
  return !pod.spec.required_node_affinity.has_value() || MatchesAnyTerm(pod.spec.required_node_affinity->terms, node);
}

bool ToleratesTaint(const Toleration& toleration, const Taint& taint) {
  // Two different unknown effects both decode to kUnknown and would compare equal here; that cannot
  // matter, because taints whose effect is not NoSchedule or NoExecute are never checked.
  if (toleration.effect != TaintEffect::kNone && toleration.effect != taint.effect) return false;
  if (!toleration.key.empty() && toleration.key != taint.key) return false;
  switch (toleration.op) {
    case TolerationOperator::kEqual:
      return toleration.value == taint.value;
    case TolerationOperator::kExists:
      return true;
    case TolerationOperator::kUnknown:
      return false;
  }
  return false;
}

const Taint* FindUntoleratedTaint(const Pod& pod, const Node& node) {
  for (const Taint& taint : node.spec.taints) {
    if (taint.effect != TaintEffect::kNoSchedule && taint.effect != TaintEffect::kNoExecute) continue;
    const bool tolerated = std::any_of(pod.spec.tolerations.begin(), pod.spec.tolerations.end(),
                                       [&](const Toleration& toleration) { return ToleratesTaint(toleration, taint); });
    if (!tolerated) return &taint;
  }
  return nullptr;
}

}  // namespace topofit::kube
