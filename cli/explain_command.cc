#include "cli/explain_command.h"

#include <httplib.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "history/decisions_http.h"
#include "history/explain.h"
#include "history/record_json.h"
#include "history/store.h"
#include "kubeclient/config.h"

namespace topofit::cli {
namespace {

using PageSource = std::function<absl::StatusOr<history::DecisionPage>(const history::DecisionQuery&)>;

absl::StatusOr<PageSource> ServerSource(const ExplainOptions& options) {
  std::string token;
  if (!options.token_file.empty()) {
    absl::StatusOr<std::string> read = kubeclient::ReadFileToString(options.token_file);
    if (!read.ok()) return absl::InvalidArgumentError(absl::StrCat("--token-file: ", read.status().message()));
    token = std::string(absl::StripAsciiWhitespace(*read));
  }
  auto client = std::make_shared<httplib::Client>(options.server);
  if (!client->is_valid()) return absl::InvalidArgumentError(absl::StrCat("--server ", options.server, " is not a URL"));
  client->set_connection_timeout(5);
  client->set_read_timeout(30);
  return PageSource([client, token, server = options.server](const history::DecisionQuery& query)
                        -> absl::StatusOr<history::DecisionPage> {
    httplib::Params params{{"limit", std::to_string(query.limit)}};
    if (!query.pod.empty()) params.emplace("pod", query.pod);
    if (!query.pod_uid.empty()) params.emplace("uid", query.pod_uid);
    if (!query.node_group.empty()) params.emplace("group", query.node_group);
    if (query.before_id > 0) params.emplace("cursor", std::to_string(query.before_id));
    httplib::Headers headers;
    if (!token.empty()) headers.emplace("Authorization", absl::StrCat("Bearer ", token));
    httplib::Result reply = client->Get("/decisions", params, headers);
    if (!reply) return absl::UnavailableError(absl::StrCat(server, ": ", httplib::to_string(reply.error())));
    if (reply->status != 200) {
      return absl::UnavailableError(absl::StrCat(server, "/decisions answered ", reply->status, ": ", reply->body));
    }
    const nlohmann::json body = nlohmann::json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
    return history::DecisionPageFromJson(body);
  });
}

// The newest `limit` records about the subject, newest first. A pod's are those of its newest uid (its
// correlation id): the expander records the pods cluster-autoscaler makes from a ProvisioningRequest under
// their own names, and the uid of the pod they stand for.
absl::StatusOr<std::vector<history::Record>> Fetch(const ExplainOptions& options, const PageSource& source) {
  history::DecisionQuery query;
  if (options.subject == "pod") {
    query.pod = options.name;
    query.limit = 1;
    absl::StatusOr<history::DecisionPage> newest = source(query);
    if (!newest.ok()) return newest.status();
    if (newest->records.empty()) return std::vector<history::Record>{};
    for (const history::PodSubject& pod : newest->records.front().pods) {
      if (pod.key == options.name) query.pod_uid = pod.uid;
    }
    query.pod.clear();
  } else {
    query.node_group = options.name;
  }
  std::vector<history::Record> records;
  do {
    query.limit = static_cast<int>(std::min<int64_t>(history::kMaxPageSize, options.limit - records.size()));
    absl::StatusOr<history::DecisionPage> page = source(query);
    if (!page.ok()) return page.status();
    for (history::Record& r : page->records) records.push_back(std::move(r));
    query.before_id = page->next_before_id;
  } while (query.before_id != 0 && static_cast<int64_t>(records.size()) < options.limit);
  return records;
}

}  // namespace

int RunExplain(const ExplainOptions& options, std::ostream& out, std::ostream& err) {
  if (options.server.empty() == options.db.empty()) {
    err << "topofit explain: give one source: --server URL (with --token-file) or --db PATH\n";
    return 1;
  }
  if (options.limit < 1) {
    err << "topofit explain: --limit must be positive\n";
    return 1;
  }
  std::unique_ptr<history::DecisionStore> store;
  PageSource source;
  if (!options.db.empty()) {
    absl::StatusOr<std::unique_ptr<history::DecisionStore>> opened = history::DecisionStore::Open(options.db);
    if (!opened.ok()) {
      err << "topofit explain: " << opened.status().message() << "\n";
      return 1;
    }
    store = *std::move(opened);
    source = [&store](const history::DecisionQuery& query) { return store->Query(query); };
  } else {
    absl::StatusOr<PageSource> server = ServerSource(options);
    if (!server.ok()) {
      err << "topofit explain: " << server.status().message() << "\n";
      return 1;
    }
    source = *std::move(server);
  }
  absl::StatusOr<std::vector<history::Record>> records = Fetch(options, source);
  if (!records.ok()) {
    err << "topofit explain: " << records.status().message() << "\n";
    return 1;
  }
  const bool pod = options.subject == "pod";
  const std::vector<history::Record> told = pod ? history::PodChain(options.name, *records) : *records;
  if (told.empty()) {
    err << "topofit explain: no decision recorded about " << options.subject << " " << options.name << "\n";
    return 2;
  }
  if (options.json) {
    nlohmann::json decisions = nlohmann::json::array();
    for (const history::Record& r : told) {
      nlohmann::json j = history::RecordToJson(r);
      j["text"] = history::DescribeRecord(r);
      decisions.push_back(std::move(j));
    }
    nlohmann::json doc = {{options.subject, options.name}, {"decisions", std::move(decisions)}};
    if (pod) {
      // The chain's own records carry it (rankings and intents, about several pods, do not).
      auto own = std::find_if(told.begin(), told.end(), [](const history::Record& r) { return !r.correlation_id.empty(); });
      if (own != told.end()) doc["correlationId"] = own->correlation_id;
    }
    out << doc.dump(2) << "\n";
  } else {
    out << (pod ? history::ExplainPod(options.name, told) : history::ExplainGroup(options.name, told));
  }
  return 0;
}

void AddExplainCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ExplainOptions>();
  CLI::App* explain = app.add_subcommand(
      "explain", "Tell why a pod waited or where it went, and why a node group grew or did not, from the decision "
                 "history (newest first)");
  explain->require_subcommand(1);
  explain->add_option("--server", options->server, "the extender's ops port, e.g. http://127.0.0.1:9090")
      ->option_text("URL");
  explain->add_option("--token-file", options->token_file, "the admin token for --server")->option_text("FILE");
  explain->add_option("--db", options->db, "a decision database (--decision-db of a server or of topofit bench)")
      ->option_text("PATH");
  explain->add_flag("--json", options->json, "the records as JSON, each with its text");
  explain->add_option("--limit", options->limit, "newest records read at most (default 500)")->option_text("N");
  CLI::App* pod = explain->add_subcommand("pod", "a pod's chain: refusals, capacity asked, the group grown, the bind");
  pod->add_option("name", options->name, "NAMESPACE/NAME")->required();
  CLI::App* group = explain->add_subcommand("group", "a node group: the rankings that chose it or passed it over");
  group->add_option("name", options->name, "the node group's id as cluster-autoscaler names it")->required();
  for (CLI::App* sub : {pod, group}) {
    sub->callback([options, sub, &exit_code] {
      options->subject = sub->get_name();
      exit_code = RunExplain(*options, std::cout, std::cerr);
    });
  }
}

}  // namespace topofit::cli
