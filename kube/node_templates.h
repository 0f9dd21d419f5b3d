#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "kube/objects.h"

namespace topofit::kube {

// Node-group template nodes by node group id, each shared and never changed (replace an entry to change
// it). cluster-autoscaler sends every group's template in every BestOptions call: the expander keeps them
// decoded across calls, and the call's ranking, the extender's capacity asks and the ledger's recording
// read those objects rather than copies of them.
using NodeTemplates = std::map<std::string, std::shared_ptr<const Node>, std::less<>>;

inline std::shared_ptr<const Node> SharedTemplate(Node template_node) {
  return std::make_shared<const Node>(std::move(template_node));
}

// Templates given by value, shared.
inline NodeTemplates SharedTemplates(std::map<std::string, Node> templates) {
  NodeTemplates shared;
  for (auto& [group, template_node] : templates) shared.emplace(group, SharedTemplate(std::move(template_node)));
  return shared;
}

}  // namespace topofit::kube
