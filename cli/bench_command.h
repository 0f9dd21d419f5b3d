#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace topofit::cli {

// The options of `topofit bench`, as parsed from the command line.
struct BenchOptions {
  std::string workload = "synthetic";  // synthetic, openb, azure-llm, gangs
  std::string traces;                  // folder holding alibaba-gpu-v2023/ and azure-llm-inference-2023/
  int64_t pods = 10000;                // synthetic: pod count
  double burst_pods = 24;              // synthetic: mean inference pods per burst
  double diurnal = 0;                  // synthetic: how much the bursts' rate follows the day (0..1)
  int racks = 8;                       // gangs (and jobs without --fleet): NVL72 racks
  std::string jobs_file;               // jobs: the CSV
  std::string fleet;                   // the node groups as YAML; empty: the workload's own
  bool print_fleet = false;            // write the workload's node groups as a fleet file, replay nothing
  uint64_t seed = 1;
  std::string seeds;                   // "1-5": every policy for each of these seeds (empty: `seed` alone)
  std::string baselines = "stock,tuned";  // stock, tuned, sweep (the tuned world with each expander chain)
  std::string policies = "extender-only,expander-only,topofit";
  std::string headroom = "none";
  int headroom_budget_gpus = 0;
  double headroom_quantile = 0.8;
  std::string expander_chain = "least-waste";
  std::string expander_priorities;     // the `priority` expander's ConfigMap text (key `priorities`)
  std::string out;                     // write CSV, JSON and plots here (empty: table only)
  std::string decision_db;             // record the topofit policy's decisions (first seed) here
  std::string openb_pod_list = "openb_pod_list_default.csv";
  std::string openb_node_list = "openb_node_list_gpu_node.csv";  // _all_node.csv adds the CPU-only nodes
  double openb_interval_seconds = 0;   // > 0: the FGD paper's mode, pods submitted in order at this interval
  double openb_compression = 1;
  bool openb_initial_from_trace = false;
  bool nv_required = false;            // openb: multi-GPU pods require NVLink (default: prefer)
  double horizon_hours = 0;            // stop the replay here (0: when nothing can change)
  double lead_in_minutes = 0;          // > 0: the first arrivals ran this long before measuring (lead_in.h)
  double provision_failure_rate = 0;   // share of requested nodes that never come up, every group
  std::string gpu_ids = "agent";       // who gives topofit-bound pods their GPU ids: agent, device-plugin
  std::string gpu_api = "device-plugin";  // how pods ask for GPUs: device-plugin, dra
  double comm_fraction = -1;           // >= 0: every multi-GPU pod's collective share (< 0: the workload's)
  bool runtimes_declared = false;      // multi-GPU pods say their run time (topofit.io/expected-runtime)
  bool legend = true;                  // a line per row under the table
  int jobs = 0;                        // policies replayed at once (0: one per core)
  bool progress = true;
};

// Runs `topofit bench` with its streams injected: the table goes to `out`, progress and errors to `err`.
// Exit codes: 0 ok, 1 bad input (unknown workload, baseline, policy or expander, malformed --seeds,
// unreadable or malformed --expander-priorities, unreadable trace, unwritable --out, a --decision-db that
// does not open or a --decision-db without the topofit policy).
int RunBench(const BenchOptions& options, std::ostream& out, std::ostream& err);

// `topofit bench`: replay a workload (a trace or the built-in generator) through the stock components
// and through topofit's decision code, and report GPU-hours provisioned vs allocated, stranded
// scale-ups, pending times, placement quality and cost per policy (docs/bench.md).
void AddBenchCommand(CLI::App& app, int& exit_code);

// What `topofit bench` does, and the options it takes, defined on `command`: the subcommand, or the whole
// of `topofit-bench` (cli/bench_main.cc).
void DefineBench(CLI::App& command, int& exit_code);
inline constexpr std::string_view kBenchDescription =
    "Replay a GPU workload through the stock scheduler and autoscaler (as shipped and as an operator tunes them) "
    "and through topofit; report idle GPU-hours, stranded nodes, pending times, placement quality and cost per "
    "policy over one measuring window";

}  // namespace topofit::cli
