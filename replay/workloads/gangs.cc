#include "replay/workloads/gangs.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "replay/workloads/pod_order.h"
#include "replay/workloads/seeded_random.h"

namespace topofit::sim {
namespace {

constexpr int kTraysPerRack = 18;
constexpr int kGpusPerTray = 4;

// Training gangs by GPUs. The shape, not the figures, follows published cluster studies: most multi-GPU
// jobs are small while the few large ones hold most GPU-hours (Microsoft's Philly, Jeon et al., ATC 2019;
// SenseTime's Helios, Hu et al., SC 2021; Shanghai AI Lab's Acme, Hu et al., NSDI 2024). Sizes are whole
// trays; 72 is a whole rack.
constexpr int kTrainingGpus[] = {8, 16, 32, 64, 72};
constexpr double kTrainingWeights[] = {0.35, 0.30, 0.20, 0.10, 0.05};
// Wide expert-parallel inference (llm-d on LeaderWorkerSet: DeepSeek-class models over 16-32 GPUs).
constexpr int kInferenceGpus[] = {16, 32};
constexpr double kInferenceWeights[] = {0.6, 0.4};

// The `members` pods of one gang, all alike (one pod template).
void AddGang(const std::string& name, int gpus, SimTime arrival, SimTime duration, double comm_fraction,
             bool replica, const char* kind, std::vector<PodSpec>& pods) {
  const int members = gpus / kGpusPerTray;
  for (int i = 0; i < members; ++i) {
    PodSpec pod;
    pod.name = absl::StrCat(name, "-", i);
    pod.arrival = arrival;
    pod.duration = duration;
    pod.gpus = kGpusPerTray;
    pod.cpu_milli = 64'000;
    pod.memory_mib = 512 * 1024;
    pod.comm_fraction = comm_fraction;
    pod.runs_until_deleted = replica;
    pod.kind = kind;
    // A rank evicted stops the whole job: gang workloads keep CA's scale-down away.
    pod.safe_to_evict = false;
    pod.gang = name;
    pod.gang_size = members;
    pod.gang_topology = "domain";
    pods.push_back(std::move(pod));
  }
}

// How many of a per-day, per-8-racks rate fall in the options' window and fleet.
int64_t Scaled(int per_day, const GangsOptions& options) {
  return std::llround(per_day * (static_cast<double>(options.horizon) / static_cast<double>(kDay)) *
                      (options.racks / 8.0));
}

}  // namespace

std::vector<NodeGroupSpec> Nvl72Fleet(int racks) {
  std::vector<NodeGroupSpec> groups;
  for (int r = 0; r < racks; ++r) {
    NodeGroupSpec rack;
    rack.name = absl::StrFormat("nvl72-%02d", r);
    rack.shape = "gb200-nvl72-node";
    rack.gpus = kGpusPerTray;
    // A compute tray: two Grace CPUs (72 cores, 480 GB each), less the kubelet's and the system's share.
    rack.cpu_milli = 142'000;
    rack.memory_mib = 880 * 1024;
    rack.min_size = 0;
    rack.max_size = kTraysPerRack;
    // Assumed on-demand price: $10.50 per GPU-hour, in the range clouds list GB200 at (2025).
    rack.price_per_hour = 42.0;
    rack.provision_delay_min = 6 * kMinute;
    rack.provision_delay_max = 12 * kMinute;
    rack.nodes_per_domain = kTraysPerRack;
    groups.push_back(std::move(rack));
  }
  return groups;
}

Workload GenerateGangs(const GangsOptions& options) {
  SeededRandom random(options.seed);
  const SimTime horizon = std::max<SimTime>(options.horizon, 1);
  std::vector<PodSpec> pods;
  const int64_t training = Scaled(options.training_gangs_per_day, options);
  const int64_t inference = Scaled(options.inference_groups_per_day, options);
  const int64_t singles = Scaled(options.single_gpu_pods_per_day, options);
  for (int64_t i = 0; i < training; ++i) {
    AddGang(absl::StrFormat("train-%04d", i), kTrainingGpus[random.Pick(kTrainingWeights)],
            random.UniformTime(horizon), random.LogNormal(2 * kHour, 0.8, 20 * kMinute, 24 * kHour), 0.15,
            false, "training", pods);
  }
  for (int64_t i = 0; i < inference; ++i) {
    AddGang(absl::StrFormat("wide-ep-%04d", i), kInferenceGpus[random.Pick(kInferenceWeights)],
            random.UniformTime(horizon), random.LogNormal(3 * kHour, 0.5, kHour, 12 * kHour), 0.3, true,
            "inference", pods);
  }
  for (int64_t i = 0; i < singles; ++i) {
    PodSpec pod;
    pod.name = absl::StrFormat("one-%05d", i);
    pod.arrival = random.UniformTime(horizon);
    pod.duration = random.LogNormal(30 * kMinute, 1.0, 2 * kMinute, 8 * kHour);
    pod.gpus = 1;
    pod.cpu_milli = 8'000;
    pod.memory_mib = 64 * 1024;
    pod.kind = "inference";
    pods.push_back(std::move(pod));
  }
  SortByArrivalThenName(pods);
  Workload workload;
  workload.name = "gangs:nvl72";
  workload.groups = Nvl72Fleet(options.racks);
  workload.pods = std::move(pods);
  workload.description = absl::StrCat(
      "gangs on ", options.racks, " NVL72 racks, seed ", options.seed, ": ", training,
      " training gangs (8/16/32/64/72 GPUs at 35/30/20/10/5%, 4-GPU members requiring one NVLink domain, "
      "log-normal median 2 h), ",
      inference, " wide-EP inference groups (16/32 GPUs at 60/40%, log-normal median 3 h), ", singles,
      " 1-GPU pods (log-normal median 30 min), arrivals over ", horizon / kSecond, " s");
  return workload;
}

}  // namespace topofit::sim
