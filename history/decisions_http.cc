#include "history/decisions_http.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "history/record_json.h"
#include "server/bearer_token.h"

namespace topofit::history {

absl::StatusOr<DecisionQuery> ParseDecisionQuery(const std::multimap<std::string, std::string>& params) {
  DecisionQuery query;
  for (const auto& [key, value] : params) {
    if (params.count(key) > 1) return absl::InvalidArgumentError(absl::StrCat("'", key, "' is given more than once"));
    if (key == "pod") {
      query.pod = value;
    } else if (key == "uid") {
      query.pod_uid = value;
    } else if (key == "group") {
      query.node_group = value;
    } else if (key == "node") {
      query.node = value;
    } else if (key == "kind") {
      absl::StatusOr<Kind> kind = ParseKind(value);
      if (!kind.ok()) return kind.status();
      query.kind = *kind;
    } else if (key == "since") {
      absl::StatusOr<absl::Time> since = ParseRecordTime(value);
      if (!since.ok()) return absl::InvalidArgumentError(absl::StrCat("since: ", since.status().message()));
      query.since = *since;
    } else if (key == "limit") {
      if (!absl::SimpleAtoi(value, &query.limit) || query.limit < 1 || query.limit > kMaxPageSize) {
        return absl::InvalidArgumentError(absl::StrCat("limit '", value, "' is not a number in 1..", kMaxPageSize));
      }
    } else if (key == "cursor") {
      if (!absl::SimpleAtoi(value, &query.before_id) || query.before_id < 1) {
        return absl::InvalidArgumentError(absl::StrCat("cursor '", value, "' is not one this endpoint gave"));
      }
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown parameter '", key, "' (pod, uid, group, node, kind, since, limit, cursor)"));
    }
  }
  return query;
}

nlohmann::json DecisionPageToJson(const DecisionPage& page) {
  nlohmann::json decisions = nlohmann::json::array();
  for (const Record& r : page.records) decisions.push_back(RecordToJson(r));
  nlohmann::json out = {{"decisions", std::move(decisions)}};
  if (page.next_before_id != 0) out["nextCursor"] = std::to_string(page.next_before_id);
  return out;
}

absl::StatusOr<DecisionPage> DecisionPageFromJson(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("decisions") || !json["decisions"].is_array()) {
    return absl::InvalidArgumentError("not a page of decisions: no 'decisions' array");
  }
  DecisionPage page;
  for (const nlohmann::json& decision : json["decisions"]) {
    absl::StatusOr<Record> record = RecordFromJson(decision);
    if (!record.ok()) return record.status();
    page.records.push_back(*std::move(record));
  }
  if (auto cursor = json.find("nextCursor"); cursor != json.end()) {
    if (!cursor->is_string() || !absl::SimpleAtoi(cursor->get<std::string>(), &page.next_before_id)) {
      return absl::InvalidArgumentError("'nextCursor' is not a cursor");
    }
  }
  return page;
}

void RegisterDecisionsRoute(server::HttpServer& server, const DecisionStore* store, std::string admin_token,
                            std::string unavailable) {
  server.Handle("GET", "/decisions",
                server::RequireAdminToken(std::move(admin_token), [store, unavailable = std::move(unavailable)](
                                                                      const server::HttpRequest& request) {
                  if (store == nullptr) {
                    return server::JsonError(503, absl::StrCat("the decision history is unavailable: ",
                                                             unavailable.empty() ? "not kept by this process" : unavailable));
                  }
                  absl::StatusOr<DecisionQuery> query = ParseDecisionQuery(request.query);
                  if (!query.ok()) return server::JsonError(400, query.status().message());
                  absl::StatusOr<DecisionPage> page = store->Query(*query);
                  if (!page.ok()) return server::JsonError(500, page.status().message());
                  return server::JsonResponse(200, DecisionPageToJson(*page));
                }),
                server::RouteOptions{.blocking = true});
}

}  // namespace topofit::history
