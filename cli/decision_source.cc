#include "cli/decision_source.h"

#include <httplib.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "codec/bounded_json.h"
#include "history/decisions_http.h"
#include "history/record_json.h"
#include "kubeclient/config.h"

namespace topofit::cli {
namespace {

absl::StatusOr<history::PageSource> ServerPages(const std::string& server, const std::string& token_file) {
  std::string token;
  if (!token_file.empty()) {
    absl::StatusOr<std::string> read = kubeclient::ReadFileToString(token_file);
    if (!read.ok()) return absl::InvalidArgumentError(absl::StrCat("--token-file: ", read.status().message()));
    token = std::string(absl::StripAsciiWhitespace(*read));
  }
  auto client = std::make_shared<httplib::Client>(server);
  if (!client->is_valid()) return absl::InvalidArgumentError(absl::StrCat("--server ", server, " is not a URL"));
  client->set_connection_timeout(5);
  client->set_read_timeout(30);
  return history::PageSource([client, token, server](const history::DecisionQuery& query)
                                 -> absl::StatusOr<history::DecisionPage> {
    httplib::Params params{{"limit", std::to_string(query.limit)}};
    if (!query.pod.empty()) params.emplace("pod", query.pod);
    if (!query.pod_uid.empty()) params.emplace("uid", query.pod_uid);
    if (!query.node_group.empty()) params.emplace("group", query.node_group);
    if (!query.node.empty()) params.emplace("node", query.node);
    if (query.kind) params.emplace("kind", std::string(history::KindName(*query.kind)));
    if (query.since) params.emplace("since", history::FormatRecordTime(*query.since));
    if (query.before_id > 0) params.emplace("cursor", std::to_string(query.before_id));
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", absl::StrCat("Bearer ", token));
    httplib::Result reply = client->Get("/decisions", params, headers);
    if (!reply) return absl::UnavailableError(absl::StrCat(server, ": ", httplib::to_string(reply.error())));
    if (reply->status != 200) {
      return absl::UnavailableError(absl::StrCat(server, "/decisions answered ", reply->status, ": ", reply->body));
    }
    const absl::StatusOr<nlohmann::json> body =
        codec::ParseBoundedJson(reply->body, codec::kReplyJsonLimits, absl::StrCat(server, "/decisions"));
    if (!body.ok()) return body.status();
    return history::DecisionPageFromJson(*body);
  });
}

}  // namespace

void AddDecisionSourceFlags(CLI::App& cmd, std::string& server, std::string& token_file, std::string& db) {
  cmd.add_option("--server", server, "the extender's ops port, e.g. http://127.0.0.1:9090")->option_text("URL");
  cmd.add_option("--token-file", token_file, "the admin token for --server")->option_text("FILE");
  cmd.add_option("--db", db, "a decision database (--decision-db of a server or of topofit bench)")->option_text("PATH");
}

absl::StatusOr<DecisionSource> OpenDecisionSource(const std::string& server, const std::string& token_file,
                                                  const std::string& db) {
  if (server.empty() == db.empty()) {
    return absl::InvalidArgumentError("give one source: --server URL (with --token-file) or --db PATH");
  }
  DecisionSource source;
  if (!db.empty()) {
    absl::StatusOr<std::unique_ptr<history::DecisionStore>> opened = history::DecisionStore::OpenForReading(db);
    if (!opened.ok()) return opened.status();
    source.store = *std::move(opened);
    source.pages = [store = source.store.get()](const history::DecisionQuery& query) { return store->Query(query); };
    return source;
  }
  absl::StatusOr<history::PageSource> pages = ServerPages(server, token_file);
  if (!pages.ok()) return pages.status();
  source.pages = *std::move(pages);
  return source;
}

}  // namespace topofit::cli
