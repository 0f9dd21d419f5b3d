#include "cli/bench_command.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <functional>
#include <limits>
#include <optional>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "replay/comparison.h"
#include "replay/operator_tuning.h"
#include "replay/policy.h"
#include "replay/seeds.h"
#include "replay/report.h"
#include "replay/simulator.h"
#include "replay/summary.h"
#include "replay/workloads/azure_llm.h"
#include "replay/workloads/declared_runtimes.h"
#include "replay/workloads/fleet_file.h"
#include "replay/workloads/gangs.h"
#include "replay/workloads/jobs_file.h"
#include "replay/workloads/lead_in.h"
#include "replay/workloads/openb.h"
#include "replay/workloads/synthetic.h"
#include "history/recorder.h"
#include "history/store.h"

namespace topofit::cli {
namespace {

// Records per transaction of a replay's decision writer, and its SQLite page cache: the writer, not the
// replay, bounds a recorded replay (with the default 2 MiB cache it reads index pages back from the file).
// 100,000 synthetic pods, tuned + topofit, on the shared 2-core machine: 3.4-4.0 s without recording,
// 7.8-8.4 s with batches of 512 and 2 MiB, 7.4-7.5 s with these (docs/decision-history.md).
constexpr size_t kReplayBatch = 16384;
constexpr int64_t kReplayCacheKib = 256 * 1024;

// A replay's decision database, new: the file and its WAL are replaced, so that it holds this replay alone.
// Nothing is evicted (a replay's record is bounded by its workload).
absl::StatusOr<std::unique_ptr<history::DecisionStore>> OpenBenchDecisionDb(const std::string& path) {
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix, ignored);
  absl::StatusOr<std::unique_ptr<history::DecisionStore>> store = history::DecisionStore::Open(
      path,
      {.max_age = absl::InfiniteDuration(),
       .max_rows = std::numeric_limits<int64_t>::max(),
       .max_bytes = std::numeric_limits<int64_t>::max()},
      kReplayCacheKib);
  if (!store.ok()) return store.status();
  if (absl::Status marked = (*store)->MarkReplayClock(); !marked.ok()) return marked;
  return store;
}

using sim::kSecond;

std::string TracesDir(const BenchOptions& options) {
  if (!options.traces.empty()) return options.traces;
  if (const char* shared = std::getenv("TOPOFIT_SHARED_DIR"); shared != nullptr && *shared != '\0') {
    return absl::StrCat(shared, "/traces");
  }
  return "traces";
}

// The folder of a trace workload under the traces directory, or an error saying where the public trace is
// to be found (README.md, "Traces"): the traces are not part of the repository.
absl::StatusOr<std::string> TraceFolder(const BenchOptions& options, absl::string_view folder, absl::string_view trace) {
  const std::string dir = absl::StrCat(TracesDir(options), "/", folder);
  std::error_code error;
  if (std::filesystem::is_directory(dir, error)) return dir;
  return absl::NotFoundError(absl::StrCat("no ", trace, " in ", dir, ": download it as README.md (\"Traces\") says, ",
                                          "then name the folder holding ", folder, "/ with --traces"));
}

absl::StatusOr<sim::Workload> LoadSource(const BenchOptions& options, uint64_t seed) {
  if (options.workload == "synthetic") {
    if (options.pods <= 0) return absl::InvalidArgumentError("--pods must be positive");
    sim::SyntheticOptions synthetic;
    synthetic.pod_count = options.pods;
    synthetic.burst_mean_pods = options.burst_pods;
    synthetic.diurnal_amplitude = options.diurnal;
    synthetic.seed = seed;
    return sim::GenerateSynthetic(synthetic);
  }
  if (options.workload == "openb") {
    absl::StatusOr<std::string> folder = TraceFolder(options, sim::kOpenbFolder, "Alibaba GPU 2023 trace");
    if (!folder.ok()) return folder.status();
    sim::OpenbOptions openb;
    openb.trace_dir = *std::move(folder);
    openb.pod_list = options.openb_pod_list;
    openb.node_list = options.openb_node_list;
    openb.fixed_interarrival = static_cast<sim::SimTime>(options.openb_interval_seconds * kSecond);
    openb.time_compression = options.openb_compression;
    openb.initial_size_from_trace = options.openb_initial_from_trace;
    openb.multi_gpu_nv_required = options.nv_required;
    return sim::LoadOpenb(openb);
  }
  if (options.workload == "jobs") {
    if (options.jobs_file.empty()) return absl::InvalidArgumentError("--workload jobs needs --jobs-file FILE");
    // The fleet: --fleet replaces it below; without it, NVL72 racks.
    return sim::LoadJobsCsv(options.jobs_file, sim::Nvl72Fleet(options.racks));
  }
  if (options.workload == "gangs") {
    sim::GangsOptions gangs;
    gangs.racks = options.racks;
    gangs.seed = seed;
    return sim::GenerateGangs(gangs);
  }
  if (options.workload == "azure-llm") {
    absl::StatusOr<std::string> folder = TraceFolder(options, sim::kAzureLlmFolder, "Azure LLM inference 2023 trace");
    if (!folder.ok()) return folder.status();
    sim::AzureLlmOptions azure;
    azure.trace_dir = *std::move(folder);
    return sim::LoadAzureLlm(azure);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown workload \"", options.workload, "\"; known: synthetic, openb, azure-llm, gangs, jobs"));
}

// The workload of one seed (the generator's for that seed; a trace whatever the seed), with the options
// that apply to every workload.
absl::StatusOr<sim::Workload> LoadWorkload(const BenchOptions& options, uint64_t seed) {
  absl::StatusOr<sim::Workload> workload = LoadSource(options, seed);
  if (!workload.ok()) return workload;
  if (!options.fleet.empty()) {
    std::ifstream in(options.fleet);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return absl::NotFoundError(absl::StrCat("--fleet ", options.fleet, ": cannot read it"));
    absl::StatusOr<std::vector<sim::NodeGroupSpec>> fleet = sim::ParseFleetYaml(text.str());
    if (!fleet.ok()) return absl::InvalidArgumentError(absl::StrCat("--fleet ", options.fleet, ": ", fleet.status().message()));
    workload->groups = *std::move(fleet);
    absl::StrAppend(&workload->description, "; fleet from ", options.fleet);
  }
  // A fleet file says its own failure rates; the flag overrides them only when given.
  if (options.fleet.empty() || options.provision_failure_rate > 0) {
    for (sim::NodeGroupSpec& group : workload->groups) group.provision_failure_rate = options.provision_failure_rate;
  }
  if (options.comm_fraction >= 0) {
    for (sim::PodSpec& pod : workload->pods) {
      if (pod.gpus >= 2) pod.comm_fraction = options.comm_fraction;
    }
    absl::StrAppend(&workload->description, "; every multi-GPU pod's comm_fraction set to ", options.comm_fraction);
  }
  if (options.runtimes_declared) sim::DeclareRuntimes(*workload);
  return sim::WithLeadIn(*std::move(workload), static_cast<sim::SimTime>(options.lead_in_minutes * sim::kMinute));
}

// What every `priority` expander reads: --expander-priorities, else the ConfigMap an operator writes to
// prefer the workload's NVLink groups (operator_tuning.h), said on `err`.
absl::StatusOr<sim::ExpanderPriorities> LoadPriorities(const BenchOptions& options, const sim::Workload& workload,
                                                       std::ostream& err) {
  std::string text;
  if (options.expander_priorities.empty()) {
    absl::StatusOr<std::vector<sim::GroupState>> groups = sim::BuildGroups(workload.groups);
    if (!groups.ok()) return groups.status();
    text = sim::NvlinkPrioritiesYaml(*groups);
    err << "topofit bench: the priority expander prefers the NVLink groups:\n" << text;
  } else {
    std::ifstream file(options.expander_priorities);
    if (!file.is_open()) {
      return absl::InvalidArgumentError(absl::StrCat("--expander-priorities: cannot read ",
                                                     options.expander_priorities, ": ", std::strerror(errno)));
    }
    std::stringstream read;
    read << file.rdbuf();
    text = read.str();
  }
  absl::StatusOr<sim::ExpanderPriorities> priorities = sim::ParseExpanderPriorities(text);
  if (!priorities.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--expander-priorities ", options.expander_priorities, ": ", priorities.status().message()));
  }
  return priorities;
}

// One line per policy of the seed being replayed on stderr: redrawn in place on a terminal, every
// quarter otherwise (logs).
class ProgressBar {
 public:
  ProgressBar(std::ostream& err, const std::vector<sim::Policy>& policies, bool enabled)
      : err_(err), enabled_(enabled), terminal_(isatty(STDERR_FILENO) == 1 && &err == &std::cerr) {
    for (const sim::Policy& policy : policies) {
      names_.push_back(policy.name);
      done_.push_back(0);
    }
  }

  std::function<void(double)> For(uint64_t seed, size_t index) {
    if (!enabled_) return nullptr;
    return [this, seed, index](double fraction) { Update(seed, index, fraction); };
  }

 private:
  void Update(uint64_t seed, size_t index, double fraction) {
    std::lock_guard<std::mutex> lock(mu_);
    if (seed != seed_) {
      seed_ = seed;
      std::fill(done_.begin(), done_.end(), 0);
    }
    const double before = done_[index];
    done_[index] = fraction;
    if (terminal_) {
      std::string line = absl::StrCat("\rseed ", seed, ": ");
      for (size_t i = 0; i < names_.size(); ++i) {
        absl::StrAppend(&line, names_[i], " ", static_cast<int>(done_[i] * 100), "%  ");
      }
      err_ << line << (std::all_of(done_.begin(), done_.end(), [](double d) { return d >= 1; }) ? "\n" : "")
           << std::flush;
    } else if (static_cast<int>(before * 4) != static_cast<int>(fraction * 4)) {
      err_ << "seed " << seed << ", " << names_[index] << ": " << static_cast<int>(fraction * 100)
           << "% of pods done\n" << std::flush;
    }
  }

  std::ostream& err_;
  const bool enabled_;
  const bool terminal_;
  std::mutex mu_;
  uint64_t seed_ = 0;
  std::vector<std::string> names_;
  std::vector<double> done_;
};

}  // namespace

int RunBench(const BenchOptions& options, std::ostream& out, std::ostream& err) {
  absl::StatusOr<std::vector<uint64_t>> seeds =
      options.seeds.empty() ? std::vector<uint64_t>{options.seed} : sim::ParseSeeds(options.seeds);
  if (!seeds.ok()) {
    err << "topofit bench: --seeds: " << seeds.status().message() << "\n";
    return 1;
  }
  sim::PolicySelection selection;
  selection.baselines = options.baselines;
  selection.policies = options.policies;
  selection.headroom = options.headroom;
  absl::StatusOr<std::vector<sim::StockExpander>> chain = sim::ParseExpanderChain(options.expander_chain);
  if (!chain.ok()) {
    err << "topofit bench: --expander-chain: " << chain.status().message() << "\n";
    return 1;
  }
  selection.chain = *chain;
  absl::StatusOr<std::vector<sim::Policy>> policies = sim::SelectPolicies(selection);
  if (!policies.ok()) {
    err << "topofit bench: " << policies.status().message() << "\n";
    return 1;
  }
  for (sim::Policy& policy : *policies) {
    policy.headroom.adaptive.budget_gpus = options.headroom_budget_gpus;
    if (!policy.headroom.fill_rate_named) policy.headroom.adaptive.quantile = options.headroom_quantile;
  }
  const bool dra = options.gpu_api == "dra";
  if (dra && options.gpu_ids != "agent") {
    err << "topofit bench: --gpu-ids is not read with --gpu-api dra: the DRA allocator picks every pod's GPUs\n";
    return 1;
  }
  for (sim::Policy& policy : *policies) {
    policy.gpu_ids = options.gpu_ids == "device-plugin" ? sim::GpuIds::kDevicePlugin : sim::GpuIds::kAgent;
    if (dra) policy = sim::UseDra(std::move(policy));
  }
  if (!options.expander_priorities.empty() && !sim::AnyUsesPriority(*policies)) {
    err << "topofit bench: --expander-priorities is only read when an expander chain names priority "
           "(--expander-chain, or --baselines sweep)\n";
    return 1;
  }
  // The first seed's workload is loaded here, to check it and to derive what the policies read from it,
  // and handed to the comparison.
  absl::StatusOr<sim::Workload> first = LoadWorkload(options, seeds->front());
  if (!first.ok()) {
    err << "topofit bench: " << first.status().message() << "\n";
    return 1;
  }
  if (options.print_fleet) {
    out << sim::FleetYaml(first->groups);
    return 0;
  }
  if (sim::AnyUsesPriority(*policies)) {
    absl::StatusOr<sim::ExpanderPriorities> priorities = LoadPriorities(options, *first, err);
    if (!priorities.ok()) {
      err << "topofit bench: " << priorities.status().message() << "\n";
      return 1;
    }
    for (sim::Policy& policy : *policies) policy.priorities = *priorities;
  }
  std::vector<std::string> names;
  for (const sim::Policy& policy : *policies) names.push_back(policy.name);
  err << "topofit bench: " << first->name << ": " << first->pods.size() << " pods, " << first->groups.size()
      << " node groups; policies " << absl::StrJoin(names, ",") << "; CA expanders " << sim::ExpanderChainName(*chain)
      << " (the sweep's own where named); " << seeds->size() << " seed(s)\n";

  ProgressBar progress(err, *policies, options.progress);
  sim::ComparisonOptions comparison;
  comparison.seeds = *seeds;
  comparison.replay.horizon = static_cast<sim::SimTime>(options.horizon_hours * sim::kHour);
  comparison.jobs = options.jobs > 0 ? static_cast<size_t>(options.jobs)
                                     : std::max<size_t>(1, std::thread::hardware_concurrency());
  comparison.keep_first_results = !options.out.empty();
  comparison.progress = [&progress](uint64_t seed, size_t policy) { return progress.For(seed, policy); };
  // The decision history of one replay: the topofit policy's, first seed, written in replay time.
  std::unique_ptr<history::DecisionStore> store;
  std::unique_ptr<history::AsyncRecorder> recorder;
  if (!options.decision_db.empty()) {
    auto topofit = std::find_if(policies->begin(), policies->end(), [](const sim::Policy& p) { return p.name == "topofit"; });
    if (topofit == policies->end()) {
      err << "topofit bench: --decision-db records the topofit policy's decisions: add it to --policies\n";
      return 1;
    }
    absl::StatusOr<std::unique_ptr<history::DecisionStore>> opened = OpenBenchDecisionDb(options.decision_db);
    if (!opened.ok()) {
      err << "topofit bench: --decision-db: " << opened.status().message() << "\n";
      return 1;
    }
    store = *std::move(opened);
    // A replay makes decisions far faster than a cluster: the writer may lag, never drop, and writes in
    // larger transactions than a server's (fewer commits and retention passes per record).
    recorder = std::make_unique<history::AsyncRecorder>(
        *store,
        history::RecorderOptions{.queue_capacity = std::numeric_limits<size_t>::max(), .batch_size = kReplayBatch,
                                 .writer_nice = 0},
        history::RecorderHooks{.on_write_failed = [&err](const absl::Status& s) {
          err << "topofit bench: --decision-db: " << s.message() << "\n";
        }});
    const size_t recorded = static_cast<size_t>(topofit - policies->begin());
    comparison.recorder = [&, recorded, first_seed = seeds->front()](uint64_t seed, size_t policy) {
      return seed == first_seed && policy == recorded ? recorder.get() : nullptr;
    };
  }
  std::optional<sim::Workload> preloaded = *std::move(first);
  const sim::WorkloadForSeed workload_for_seed = [&](uint64_t seed) -> absl::StatusOr<sim::Workload> {
    if (preloaded) {
      sim::Workload workload = *std::move(preloaded);
      preloaded.reset();
      return workload;
    }
    return LoadWorkload(options, seed);
  };
  absl::StatusOr<sim::Comparison> result = sim::Compare(workload_for_seed, *policies, comparison);
  if (recorder != nullptr) {
    recorder->Flush();
    err << "wrote " << options.decision_db << " (" << store->Count().value_or(0) << " decisions)\n";
  }
  if (!result.ok()) {
    err << "topofit bench: " << result.status().message() << "\n";
    return 1;
  }
  std::vector<std::vector<sim::PolicySummary>> runs;
  for (const sim::SeedComparison& seed : result->seeds) runs.push_back(seed.summaries);
  out << sim::FormatTable(result->workload, runs, options.legend);
  if (!options.out.empty()) {
    absl::StatusOr<std::vector<std::string>> written = sim::WriteReport(options.out, *result);
    if (!written.ok()) {
      err << "topofit bench: --out: " << written.status().message() << "\n";
      return 1;
    }
    for (const std::string& path : *written) err << "wrote " << path << "\n";
  }
  return 0;
}

void AddBenchCommand(CLI::App& app, int& exit_code) {
  DefineBench(*app.add_subcommand("bench", std::string(kBenchDescription)), exit_code);
}

void DefineBench(CLI::App& command, int& exit_code) {
  auto options = std::make_shared<BenchOptions>();
  CLI::App* bench = &command;
  bench->add_option("--workload", options->workload,
                    "synthetic (default), openb, azure-llm, gangs (NVL72 racks), or jobs (--jobs-file)")
      ->check(CLI::IsMember({"synthetic", "openb", "azure-llm", "gangs", "jobs"}))
      ->option_text("NAME");
  bench->add_option("--traces", options->traces,
                    "folder with alibaba-gpu-v2023/ and azure-llm-inference-2023/ (default: $TOPOFIT_SHARED_DIR/traces, "
                    "else ./traces; README.md says where to get them); read in place")
      ->option_text("DIR");
  bench->add_option("--burst-pods", options->burst_pods,
                    "synthetic: mean inference pods per burst (default 24; larger: the same pods in fewer, "
                    "larger bursts)")
      ->check(CLI::Range(1.0, 100000.0))
      ->option_text("N");
  bench->add_option("--diurnal", options->diurnal,
                    "synthetic: how much the inference bursts' rate follows the day, A in 0..1: 1 - A cos(2 pi t / "
                    "24 h) times its mean, lowest at the start (default 0: uniform)")
      ->check(CLI::Range(0.0, 1.0))
      ->option_text("A");
  bench->add_option("--pods", options->pods, "synthetic: number of pods (default 10000)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000000}))
      ->option_text("N");
  bench->add_option("--jobs-file", options->jobs_file,
                    "jobs: your jobs as CSV (docs/bench-workloads.md, \"Your own jobs\"); on --fleet, else NVL72 racks")
      ->option_text("FILE");
  bench->add_option("--fleet", options->fleet,
                    "your node groups as YAML (docs/bench-workloads.md, \"Your own fleet\"), for any workload")
      ->option_text("FILE");
  bench->add_flag("--print-fleet", options->print_fleet,
                  "write the workload's node groups as a fleet file (for --fleet) to stdout and replay nothing");
  bench->add_option("--racks", options->racks, "gangs: NVL72 racks in the fleet, one node group each (default 8)")
      ->check(CLI::Range(1, 1000))
      ->option_text("N");
  CLI::Option* seed = bench->add_option("--seed", options->seed,
                                        "seed of the generator and of every random choice in the replay (default 1)")
                          ->option_text("N");
  bench->add_option("--seeds", options->seeds,
                    "run every policy for each seed, e.g. 1-5 or 1,3,7; cells show mean ± standard deviation")
      ->excludes(seed)
      ->option_text("LIST");
  bench->add_option("--baselines", options->baselines,
                    "comma list of stock (as shipped), tuned (operator affinity, MostAllocated with GPUs) and sweep "
                    "(tuned with each of random, least-waste, price, priority,least-waste); default stock,tuned")
      ->option_text("LIST");
  bench->add_option("--policies", options->policies,
                    "comma list of extender-only, expander-only, topofit (default all three), ablations (topofit with "
                    "one mechanism off, each), topofit-affinity (required pods carry the operator affinity) and "
                    "topofit-no-keep (with --headroom: the score does not keep the buffers' sets whole)")
      ->option_text("LIST");
  bench->add_option("--headroom", options->headroom,
                    "comma list of none (default), buffer:N (a CapacityBuffer of N pods per shape of the bursty "
                    "inference pods, sized by hand) and buffer:adaptive[:F] (topofit sizes a buffer per shape from "
                    "the pods it sees, to fill rate F; docs/headroom.md); each but none runs every policy again as "
                    "<policy>+<headroom>")
      ->option_text("LIST");
  bench->add_option("--headroom-quantile", options->headroom_quantile,
                    "the share of the pods rising over one node boot that buffer:adaptive sizes each shape's buffer to "
                    "cover (its fill rate; default 0.8); buffer:adaptive:F names its own")
      ->check(CLI::Range(0.0, 1.0))
      ->option_text("0..1");
  bench->add_option("--headroom-budget-gpus", options->headroom_budget_gpus,
                    "buffer:adaptive holds at most this many GPUs over all shapes (default 0: no limit)")
      ->check(CLI::NonNegativeNumber)
      ->option_text("N");
  bench->add_option("--expander-chain", options->expander_chain,
                    "CA's stock expanders (after topofit's in its policies): random, least-waste (default), most-pods, "
                    "least-nodes, price, priority")
      ->option_text("CHAIN");
  bench->add_option("--expander-priorities", options->expander_priorities,
                    "the priority expander's configuration, as the `priorities` key of CA's "
                    "cluster-autoscaler-priority-expander ConfigMap (YAML: priority -> list of node group regexes); "
                    "default: 20 for the NVLink groups, 10 for the rest")
      ->option_text("FILE");
  bench->add_option("--gpu-ids", options->gpu_ids,
                    "who gives a pod topofit bound its GPU ids on the node: agent (topofit's node agent, the chosen "
                    "set; default) or device-plugin (NVIDIA's plugin picks; topofit learns the real ids)")
      ->check(CLI::IsMember({"agent", "device-plugin"}))
      ->option_text("WHO");
  bench->add_option("--gpu-api", options->gpu_api,
                    "how pods ask for GPUs: device-plugin (nvidia.com/gpu; default) or dra (ResourceClaims of NVIDIA's "
                    "DRA driver: kube-scheduler's DRA allocator picks every pod's GPUs, first fit; topofit's extender "
                    "filters and scores claim pods, as it does in a cluster)")
      ->check(CLI::IsMember({"device-plugin", "dra"}))
      ->option_text("API");
  bench->add_option("--comm-fraction", options->comm_fraction,
                    "set every multi-GPU pod's share of run time in collectives (the slowdown model's weight)")
      ->check(CLI::Range(0.0, 1.0))
      ->option_text("0..1");
  bench->add_option("--lead-in", options->lead_in_minutes,
                    "the pods of the trace's first arrival time (a service's running replicas, as Azure LLM's "
                    "first minute) arrive this long before the rest, and measuring begins when the rest do: "
                    "the cluster starts warm instead of cold (docs/bench.md)")
      ->check(CLI::NonNegativeNumber)
      ->option_text("MINUTES");
  bench->add_flag("--runtimes-declared", options->runtimes_declared,
                  "multi-GPU pods that run to completion say how long (topofit.io/expected-runtime: their "
                  "duration), as users who state a job's length would; only such pods ask for capacity that "
                  "gives the topology they prefer (docs/extender.md)");
  bench->add_option("--out", options->out,
                    "write summary.csv/json, timeline.csv, pending_cdf.csv and plots here (plots: the first seed)")
      ->option_text("DIR");
  bench->add_option("--decision-db", options->decision_db,
                    "record the topofit policy's decisions (first seed, replay time) in this SQLite file, replacing "
                    "it; read with `topofit explain --db` or the sqlite3 shell")
      ->option_text("PATH");
  bench->add_option("--openb-pod-list", options->openb_pod_list,
                    "openb: which openb_pod_list_*.csv (default openb_pod_list_default.csv)")
      ->option_text("FILE");
  bench->add_option("--openb-node-list", options->openb_node_list,
                    "openb: which openb_node_list_*.csv makes the node groups (default openb_node_list_gpu_node.csv; "
                    "openb_node_list_all_node.csv adds the cluster's CPU-only nodes)")
      ->option_text("FILE");
  bench->add_option("--openb-interval", options->openb_interval_seconds,
                    "openb: submit pods in file order, one per this many seconds (the FGD paper's mode)")
      ->check(CLI::NonNegativeNumber)
      ->option_text("SECONDS");
  bench->add_option("--openb-compression", options->openb_compression, "openb: divide times by this (default 1)")
      ->check(CLI::PositiveNumber)
      ->option_text("X");
  bench->add_flag("--openb-initial-from-trace", options->openb_initial_from_trace,
                  "openb: start with the trace's nodes Ready (default: none, CA grows everything)");
  bench->add_flag("--nv-required", options->nv_required,
                  "openb: multi-GPU pods require NVLink (default: they prefer it)");
  bench->add_option("--provision-failure-rate", options->provision_failure_rate,
                    "share of requested nodes that never come up (CA gives them up after 15 min, backs the group off)")
      ->check(CLI::Range(0.0, 1.0))
      ->option_text("0..1");
  bench->add_option("--horizon-hours", options->horizon_hours, "stop the replay at this simulated time")
      ->check(CLI::NonNegativeNumber)
      ->option_text("HOURS");
  bench->add_option("--jobs", options->jobs, "replays run at once (default: one per core)")
      ->check(CLI::NonNegativeNumber)
      ->option_text("N");
  // Callbacks rather than "!--no-x" flags, whose help shows CLI11's default marker ("--no-x{false}").
  bench->add_flag_callback("--no-legend", [options] { options->legend = false; }, "no legend under the table");
  bench->add_flag_callback("--no-progress", [options] { options->progress = false; }, "no progress on stderr");
  bench->callback([options, &exit_code] { exit_code = RunBench(*options, std::cout, std::cerr); });
}

}  // namespace topofit::cli
