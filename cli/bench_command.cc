#include "cli/bench_command.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/sim/policy.h"
#include "bench/sim/report.h"
#include "bench/sim/simulator.h"
#include "bench/sim/summary.h"
#include "bench/sim/workloads/azure_llm.h"
#include "bench/sim/workloads/openb.h"
#include "bench/sim/workloads/synthetic.h"

namespace topofit::cli {
namespace {

using sim::kSecond;

std::string TracesDir(const BenchOptions& options) {
  if (!options.traces.empty()) return options.traces;
  if (const char* shared = std::getenv("TOPOFIT_SHARED_DIR"); shared != nullptr && *shared != '\0') {
    return absl::StrCat(shared, "/traces");
  }
  return "../shared/traces";
}

absl::StatusOr<sim::Workload> LoadWorkload(const BenchOptions& options) {
  if (options.workload == "synthetic") {
    if (options.pods <= 0) return absl::InvalidArgumentError("--pods must be positive");
    sim::SyntheticOptions synthetic;
    synthetic.pod_count = options.pods;
    synthetic.seed = options.seed;
    return sim::GenerateSynthetic(synthetic);
  }
  if (options.workload == "openb") {
    sim::OpenbOptions openb;
    openb.trace_dir = absl::StrCat(TracesDir(options), "/", sim::kOpenbFolder);
    openb.pod_list = options.openb_pod_list;
    openb.fixed_interarrival = static_cast<sim::SimTime>(options.openb_interval_seconds * kSecond);
    openb.time_compression = options.openb_compression;
    openb.initial_size_from_trace = options.openb_initial_from_trace;
    openb.multi_gpu_nv_required = options.nv_required;
    return sim::LoadOpenb(openb);
  }
  if (options.workload == "azure-llm") {
    sim::AzureLlmOptions azure;
    azure.trace_dir = absl::StrCat(TracesDir(options), "/", sim::kAzureLlmFolder);
    return sim::LoadAzureLlm(azure);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown workload \"", options.workload, "\"; known: synthetic, openb, azure-llm"));
}

// --expander-priorities: the priority expander's configuration when the chain names `priority`.
absl::StatusOr<sim::ExpanderPriorities> LoadPriorities(const BenchOptions& options,
                                                       const std::vector<sim::StockExpander>& chain) {
  const bool wanted = std::find(chain.begin(), chain.end(), sim::StockExpander::kPriority) != chain.end();
  if (!wanted) {
    if (options.expander_priorities.empty()) return sim::ExpanderPriorities();
    return absl::InvalidArgumentError("--expander-priorities is only read when --expander-chain names priority");
  }
  if (options.expander_priorities.empty()) {
    return absl::InvalidArgumentError(
        "--expander-chain names priority: --expander-priorities FILE is required (the text of the "
        "cluster-autoscaler-priority-expander ConfigMap's `priorities` key)");
  }
  std::ifstream file(options.expander_priorities);
  if (!file.is_open()) {
    return absl::InvalidArgumentError(absl::StrCat("--expander-priorities: cannot read ", options.expander_priorities,
                                                   ": ", std::strerror(errno)));
  }
  std::stringstream text;
  text << file.rdbuf();
  absl::StatusOr<sim::ExpanderPriorities> priorities = sim::ParseExpanderPriorities(text.str());
  if (!priorities.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--expander-priorities ", options.expander_priorities, ": ", priorities.status().message()));
  }
  return priorities;
}

// One line per policy on stderr: redrawn in place on a terminal, every quarter otherwise (logs).
class ProgressBar {
 public:
  ProgressBar(std::ostream& err, const std::vector<sim::Policy>& policies, bool enabled)
      : err_(err), enabled_(enabled), terminal_(isatty(STDERR_FILENO) == 1 && &err == &std::cerr) {
    for (const sim::Policy& policy : policies) {
      names_.push_back(policy.name);
      done_.push_back(0);
    }
  }

  std::function<void(double)> For(size_t index) {
    if (!enabled_) return nullptr;
    return [this, index](double fraction) { Update(index, fraction); };
  }

 private:
  void Update(size_t index, double fraction) {
    std::lock_guard<std::mutex> lock(mu_);
    const double before = done_[index];
    done_[index] = fraction;
    if (terminal_) {
      std::string line = "\r";
      for (size_t i = 0; i < names_.size(); ++i) {
        const int filled = static_cast<int>(done_[i] * 20);
        absl::StrAppend(&line, names_[i], " [", std::string(filled, '#'), std::string(20 - filled, ' '), "] ",
                        static_cast<int>(done_[i] * 100), "%  ");
      }
      err_ << line << (std::all_of(done_.begin(), done_.end(), [](double d) { return d >= 1; }) ? "\n" : "")
           << std::flush;
    } else if (static_cast<int>(before * 4) != static_cast<int>(fraction * 4)) {
      err_ << names_[index] << ": " << static_cast<int>(fraction * 100) << "% of pods done\n" << std::flush;
    }
  }

  std::ostream& err_;
  const bool enabled_;
  const bool terminal_;
  std::mutex mu_;
  std::vector<std::string> names_;
  std::vector<double> done_;
};

}  // namespace

int RunBench(const BenchOptions& options, std::ostream& out, std::ostream& err) {
  absl::StatusOr<std::vector<sim::StockExpander>> chain = sim::ParseExpanderChain(options.expander_chain);
  if (!chain.ok()) {
    err << "topofit bench: --expander-chain: " << chain.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<sim::ExpanderPriorities> priorities = LoadPriorities(options, *chain);
  if (!priorities.ok()) {
    err << "topofit bench: " << priorities.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<std::vector<sim::Policy>> policies = sim::SelectPolicies(options.policies, *chain, *priorities);
  if (!policies.ok()) {
    err << "topofit bench: --policies: " << policies.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<sim::Workload> workload = LoadWorkload(options);
  if (!workload.ok()) {
    err << "topofit bench: " << workload.status().message() << "\n";
    return 1;
  }
  for (sim::NodeGroupSpec& group : workload->groups) group.provision_failure_rate = options.provision_failure_rate;
  err << "topofit bench: " << workload->name << ": " << workload->pods.size() << " pods, "
      << workload->groups.size() << " node groups; policies " << options.policies << "; CA expanders "
      << sim::ExpanderChainName(*chain) << "\n";

  ProgressBar progress(err, *policies, options.progress);
  const size_t jobs = options.jobs > 0 ? static_cast<size_t>(options.jobs)
                                       : std::max<size_t>(1, std::thread::hardware_concurrency());
  std::vector<absl::StatusOr<sim::ReplayResult>> results(policies->size(), absl::UnknownError("not run"));
  // Replays share nothing but the read-only workload: run `jobs` of them at a time.
  for (size_t first = 0; first < policies->size(); first += jobs) {
    std::vector<std::future<void>> running;
    for (size_t i = first; i < std::min(first + jobs, policies->size()); ++i) {
      running.push_back(std::async(std::launch::async, [&, i] {
        sim::ReplayOptions replay;
        replay.seed = options.seed;
        replay.horizon = static_cast<sim::SimTime>(options.horizon_hours * sim::kHour);
        replay.progress = progress.For(i);
        results[i] = sim::Replay(*workload, (*policies)[i], replay);
      }));
    }
    for (std::future<void>& f : running) f.get();
  }

  std::vector<sim::ReplayResult> replays;
  std::vector<sim::PolicySummary> summaries;
  for (absl::StatusOr<sim::ReplayResult>& result : results) {
    if (!result.ok()) {
      err << "topofit bench: " << result.status().message() << "\n";
      return 1;
    }
    summaries.push_back(sim::Summarise(*result));
    replays.push_back(*std::move(result));
  }
  out << sim::FormatTable(*workload, summaries);
  if (!options.out.empty()) {
    absl::StatusOr<std::vector<std::string>> written = sim::WriteReport(options.out, *workload, replays, summaries);
    if (!written.ok()) {
      err << "topofit bench: --out: " << written.status().message() << "\n";
      return 1;
    }
    for (const std::string& path : *written) err << "wrote " << path << "\n";
  }
  return 0;
}

void AddBenchCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* bench = app.add_subcommand(
      "bench", "Replay a GPU workload through the stock scheduler and autoscaler and through topofit; report idle "
               "GPU-hours, stranded scale-ups, pending times, placement quality and cost per policy");
  bench->add_option("--workload", options->workload, "synthetic (default), openb, or azure-llm")
      ->check(CLI::IsMember({"synthetic", "openb", "azure-llm"}));
  bench->add_option("--traces", options->traces,
                    "folder with alibaba-gpu-v2023/ and azure-llm-inference-2023/ (default: $TOPOFIT_SHARED_DIR/traces, "
                    "else ../shared/traces); read in place");
  bench->add_option("--pods", options->pods, "synthetic: number of pods")->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  bench->add_option("--seed", options->seed, "seed of the generator and of every random choice in the replay");
  bench->add_option("--policies", options->policies,
                    "comma list of baseline, extender-only, expander-only, topofit");
  bench->add_option("--expander-chain", options->expander_chain,
                    "CA's stock expanders after topofit's: random, least-waste, most-pods, least-nodes, price, priority");
  bench->add_option("--expander-priorities", options->expander_priorities,
                    "the priority expander's configuration, as the `priorities` key of CA's "
                    "cluster-autoscaler-priority-expander ConfigMap (YAML: priority -> list of node group regexes); "
                    "required when --expander-chain names priority");
  bench->add_option("--out", options->out, "write summary.csv/json, timeline.csv, pending_cdf.csv and plots here");
  bench->add_option("--openb-pod-list", options->openb_pod_list, "openb: which openb_pod_list_*.csv");
  bench->add_option("--openb-interval", options->openb_interval_seconds,
                    "openb: submit pods in file order, one per this many seconds (the FGD paper's mode)")
      ->check(CLI::NonNegativeNumber);
  bench->add_option("--openb-compression", options->openb_compression, "openb: divide times by this")
      ->check(CLI::PositiveNumber);
  bench->add_flag("--openb-initial-from-trace", options->openb_initial_from_trace,
                  "openb: start with the trace's nodes Ready (default: none, CA grows everything)");
  bench->add_flag("--nv-required", options->nv_required,
                  "openb: multi-GPU pods require NVLink (default: they prefer it)");
  bench->add_option("--provision-failure-rate", options->provision_failure_rate,
                    "share of requested nodes that never come up (CA gives them up after 15 min, backs the group off)")
      ->check(CLI::Range(0.0, 1.0));
  bench->add_option("--horizon-hours", options->horizon_hours, "stop the replay at this simulated time")
      ->check(CLI::NonNegativeNumber);
  bench->add_option("--jobs", options->jobs, "policies replayed at once (default: one per core)")
      ->check(CLI::NonNegativeNumber);
  bench->add_flag("!--no-progress", options->progress, "no progress on stderr");
  bench->callback([options, &exit_code] { exit_code = RunBench(*options, std::cout, std::cerr); });
}

}  // namespace topofit::cli
