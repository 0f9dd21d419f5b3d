#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "history/store.h"
#include "server/http_server.h"

namespace topofit::history {

// GET /decisions?pod=NS/NAME&uid=UID&group=G&node=N&kind=K&since=RFC3339&limit=N&cursor=C: a page of the decision
// history, newest first: {"decisions": [...], "nextCursor": "C"} (no nextCursor on the last page). Every
// parameter is optional; an unknown one or kind, a bad time, a limit outside 1..1000 or a cursor that is not one
// this endpoint gave is a 400.
absl::StatusOr<DecisionQuery> ParseDecisionQuery(const std::multimap<std::string, std::string>& params);
nlohmann::json DecisionPageToJson(const DecisionPage& page);
// The inverse, for `topofit explain --server`.
absl::StatusOr<DecisionPage> DecisionPageFromJson(const nlohmann::json& json);

// Registers the route behind the admin token (server/bearer_token.h). `store` null: the history is
// unavailable (`unavailable` says why) and the route answers 503 while the server goes on deciding.
void RegisterDecisionsRoute(server::HttpServer& server, const DecisionStore* store, std::string admin_token,
                            std::string unavailable = "");

}  // namespace topofit::history
