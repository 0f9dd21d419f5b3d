#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "ledger/ledger.h"

namespace topofit::codec {

// The ledger as served on the ops port: GET /preferences (and /intents with the expander).
nlohmann::json PreferencesToJson(const std::vector<decision::Preference>& preferences);
nlohmann::json IntentsToJson(const std::vector<decision::Intent>& intents);

}  // namespace topofit::codec
