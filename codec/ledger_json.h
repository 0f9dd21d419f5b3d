#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decision/capacity_hold.h"
#include "ledger/ledger.h"

namespace topofit::codec {

// The ledger as served on the ops port: GET /preferences (and /intents with the expander).
nlohmann::json PreferencesToJson(const std::vector<decision::Preference>& preferences);
nlohmann::json IntentsToJson(const std::vector<decision::Intent>& intents);
// What the intents hold on the nodes they brought (decision/capacity_hold.h), one entry per node group:
// its pods held for, its nodes, the GPUs held on each, and when each pod's scale-up was chosen.
nlohmann::json HoldsToJson(const decision::CapacityHolds& holds);
// The node group templates the ledger keeps (Ledger::NodeGroups): per group its GPUs, labels and taints
// ("key=value:Effect"), what the extender knows of a group that may have no node, and whether it is
// trusted (ledger::NodeGroupTemplate: an untrusted one never makes the extender refuse a node).
nlohmann::json NodeGroupsToJson(const std::map<std::string, ledger::NodeGroupTemplate>& groups);

}  // namespace topofit::codec
