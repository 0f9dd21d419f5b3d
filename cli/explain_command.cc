#include "cli/explain_command.h"

#include <iostream>
#include <memory>

#include "absl/status/statusor.h"
#include "cli/decision_source.h"
#include "history/explain_query.h"

namespace topofit::cli {

int RunExplain(const ExplainOptions& options, std::ostream& out, std::ostream& err) {
  if (options.limit < 1) {
    err << "topofit explain: --limit must be positive\n";
    return 1;
  }
  absl::StatusOr<DecisionSource> source = OpenDecisionSource(options.server, options.token_file, options.db);
  if (!source.ok()) {
    err << "topofit explain: " << source.status().message() << "\n";
    return 1;
  }
  const history::Subject subject = options.subject == "pod"        ? history::Subject::kPod
                                   : options.subject == "idle"     ? history::Subject::kIdle
                                   : options.subject == "restart"  ? history::Subject::kRestart
                                   : options.subject == "headroom" ? history::Subject::kHeadroom
                                                                   : history::Subject::kGroup;
  absl::StatusOr<history::Explanation> told = history::Explain(subject, options.name, options.limit, source->pages);
  if (!told.ok()) {
    err << "topofit explain: " << told.status().message() << "\n";
    return 1;
  }
  if (told->records.empty()) {
    if (subject == history::Subject::kRestart) {
      err << "topofit explain: no restart recorded of pod " << options.name << "\n";
    } else if (subject == history::Subject::kIdle) {
      err << "topofit explain: no idle GPUs recorded" << (options.name.empty() ? "" : " on node ") << options.name << "\n";
    } else if (subject == history::Subject::kHeadroom) {
      err << "topofit explain: no change of warm capacity recorded" << (options.name.empty() ? "" : " of ")
          << options.name << "\n";
    } else {
      err << "topofit explain: no decision recorded about " << options.subject << " " << options.name << "\n";
    }
    return 2;
  }
  if (options.json) {
    out << history::ExplanationToJson(subject, options.name, *told).dump(2) << "\n";
  } else {
    out << told->text;
  }
  return 0;
}

void AddExplainCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ExplainOptions>();
  CLI::App* explain = app.add_subcommand(
      "explain", "Tell why a pod waited or where it went, why a node group grew or did not, why GPUs are idle, "
                 "why a pod restarted, and why warm capacity grew or shrank, from the decision history (newest first)");
  explain->require_subcommand(1);
  AddDecisionSourceFlags(*explain, options->server, options->token_file, options->db);
  explain->add_flag("--json", options->json, "the records as JSON, each with its text");
  explain->add_option("--limit", options->limit, "newest records read at most (default 500)")->option_text("N");
  CLI::App* pod = explain->add_subcommand("pod", "a pod's chain: refusals, capacity asked, the group grown, the bind");
  pod->add_option("name", options->name, "NAMESPACE/NAME")->required();
  CLI::App* group = explain->add_subcommand("group", "a node group: the rankings that chose it or passed it over");
  group->add_option("name", options->name, "the node group's id as cluster-autoscaler names it")->required();
  CLI::App* idle = explain->add_subcommand(
      "idle", "free GPUs by why they are idle (fragmented, held for an intent, awaiting scale-down, no demand): each "
              "node's latest, or one node's over time");
  idle->add_option("node", options->name, "a node: its idle GPUs over time");
  CLI::App* restart = explain->add_subcommand(
      "restart", "why a pod's containers restarted (GPU fault, out of memory, eviction, image or configuration, "
                 "the application), what each restart left behind, and where topofit placed the pod");
  restart->add_option("name", options->name, "NAMESPACE/NAME")->required();
  CLI::App* headroom = explain->add_subcommand(
      "headroom", "the warm capacity `topofit headroom` keeps: what each shape holds now, and each change with why "
                  "(the rise it covers, or the lull it waited out)");
  headroom->add_option("shape", options->name, "one shape's object name, topofit-headroom-<shape>");
  for (CLI::App* sub : {pod, group, idle, restart, headroom}) {
    sub->callback([options, sub, &exit_code] {
      options->subject = sub->get_name();
      exit_code = RunExplain(*options, std::cout, std::cerr);
    });
  }
}

}  // namespace topofit::cli
