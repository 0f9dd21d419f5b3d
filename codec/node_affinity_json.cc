#include "codec/node_affinity_json.h"

#include <utility>

namespace topofit::codec {
namespace {

nlohmann::json RequirementsJson(const std::vector<kube::NodeSelectorRequirement>& requirements) {
  nlohmann::json json = nlohmann::json::array();
  for (const kube::NodeSelectorRequirement& r : requirements) {
    const char* op = r.op == kube::NodeSelectorOperator::kIn ? "In" : r.op == kube::NodeSelectorOperator::kNotIn ? "NotIn" : nullptr;
    if (op == nullptr) continue;  // shapes are named by In only; anything else is not ours to write
    json.push_back({{"key", r.key}, {"operator", op}, {"values", r.values}});
  }
  return json;
}

}  // namespace

nlohmann::json ConfinedTerms(const nlohmann::json& own, const std::vector<kube::NodeSelectorTerm>& shapes) {
  const nlohmann::json terms =
      own.is_array() && !own.empty() ? own : nlohmann::json::array({nlohmann::json::object()});
  nlohmann::json confined = nlohmann::json::array();
  for (const nlohmann::json& term : terms) {
    for (const kube::NodeSelectorTerm& shape : shapes) {
      nlohmann::json both = term;
      nlohmann::json& expressions = both["matchExpressions"];
      if (!expressions.is_array()) expressions = nlohmann::json::array();
      for (nlohmann::json& e : RequirementsJson(shape.match_expressions)) expressions.push_back(std::move(e));
      confined.push_back(std::move(both));
    }
  }
  return confined;
}

}  // namespace topofit::codec
