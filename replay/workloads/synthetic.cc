#include "replay/workloads/synthetic.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "replay/workloads/cloud_gpu_fleet.h"
#include "replay/workloads/seeded_random.h"

namespace topofit::sim {
namespace {

enum class Kind : uint8_t { kInference, kTraining, kCpu };

// A pod before it is named: 24 bytes, so a million of them sort cheaply.
struct Draft {
  SimTime arrival;
  SimTime duration;
  Kind kind;
  uint8_t gpus;
  uint8_t cpu_cores;  // for pods without GPUs
};

// Agentic inference: a burst of calls fanned out by one agent step, spread over a minute.
constexpr SimTime kBurstSpread = kMinute;
constexpr int kInferenceGpus[] = {1, 2, 4, 8};
constexpr double kInferenceGpuWeights[] = {0.60, 0.25, 0.10, 0.05};
constexpr int kTrainingGpus[] = {4, 8};
constexpr double kTrainingGpuWeights[] = {0.5, 0.5};
constexpr int kCpuCores[] = {1, 2, 4, 8};
constexpr double kCpuCoreWeights[] = {0.3, 0.3, 0.25, 0.15};

// A burst's start in [0, end): uniform, or at the day's rate (SyntheticOptions::diurnal_amplitude) by
// rejection, which leaves the uniform case's draws as they were.
SimTime BurstStart(SimTime end, double amplitude, SeededRandom& random) {
  const double a = std::clamp(amplitude, 0.0, 1.0);
  while (true) {
    const SimTime start = random.UniformTime(end);
    if (a == 0) return start;
    const double day_phase = 2 * std::numbers::pi * static_cast<double>(start % kDay) / static_cast<double>(kDay);
    if (random.Uniform() * (1 + a) < 1 - a * std::cos(day_phase)) return start;
  }
}

void DraftInference(int64_t count, const SyntheticOptions& options, SimTime horizon, SeededRandom& random,
                    std::vector<Draft>& drafts) {
  while (count > 0) {
    const int64_t burst = std::min(count, random.Geometric(options.burst_mean_pods));
    const SimTime start = BurstStart(std::max<SimTime>(horizon - kBurstSpread, 1), options.diurnal_amplitude, random);
    for (int64_t i = 0; i < burst; ++i) {
      const auto gpus = static_cast<uint8_t>(kInferenceGpus[random.Pick(kInferenceGpuWeights)]);
      drafts.push_back(Draft{start + random.UniformTime(kBurstSpread),
                             random.LogNormal(90 * kSecond, 1.0, 5 * kSecond, kHour), Kind::kInference, gpus, 0});
    }
    count -= burst;
  }
}

void DraftTraining(int64_t count, SimTime horizon, SeededRandom& random, std::vector<Draft>& drafts) {
  for (int64_t i = 0; i < count; ++i) {
    const auto gpus = static_cast<uint8_t>(kTrainingGpus[random.Pick(kTrainingGpuWeights)]);
    drafts.push_back(Draft{random.UniformTime(horizon), random.LogNormal(2 * kHour, 0.8, 10 * kMinute, 24 * kHour),
                           Kind::kTraining, gpus, 0});
  }
}

void DraftCpu(int64_t count, SimTime horizon, SeededRandom& random, std::vector<Draft>& drafts) {
  for (int64_t i = 0; i < count; ++i) {
    const auto cores = static_cast<uint8_t>(kCpuCores[random.Pick(kCpuCoreWeights)]);
    drafts.push_back(Draft{random.UniformTime(horizon),
                           random.LogNormal(10 * kMinute, 1.0, 30 * kSecond, 6 * kHour), Kind::kCpu, 0, cores});
  }
}

// Multi-GPU inference wants NVLink: 2-GPU replicas prefer it, 4- and 8-GPU ones (tensor parallel across
// the whole set) require it. Training requires it. The strings are short enough to need no allocation.
void Annotate(const Draft& draft, PodSpec& pod) {
  switch (draft.kind) {
    case Kind::kInference:
      pod.cpu_milli = draft.gpus * int64_t{4000};
      pod.memory_mib = draft.gpus * int64_t{16 * 1024};
      pod.kind = "inference";
      if (draft.gpus >= 2) {
        pod.min_link = "NV";
        pod.topology_policy = draft.gpus == 2 ? "preferred" : "required";
        pod.comm_fraction = draft.gpus == 2 ? 0.15 : 0.2;
      }
      break;
    case Kind::kTraining:
      pod.cpu_milli = draft.gpus * int64_t{8000};
      pod.memory_mib = draft.gpus * int64_t{32 * 1024};
      pod.kind = "training";
      pod.min_link = "NV";
      pod.topology_policy = "required";
      pod.comm_fraction = 0.3;
      break;
    case Kind::kCpu:
      pod.cpu_milli = draft.cpu_cores * int64_t{1000};
      pod.memory_mib = draft.cpu_cores * int64_t{4 * 1024};
      pod.kind = "cpu";
      break;
  }
}

}  // namespace

Workload GenerateSynthetic(const SyntheticOptions& options) {
  const int64_t pod_count = std::max<int64_t>(options.pod_count, 0);
  const SimTime horizon = options.horizon > 0 ? options.horizon : std::max<SimTime>(pod_count * 8640, 1);
  const auto share_of = [&](double share, int64_t left) {
    return std::clamp<int64_t>(std::llround(std::clamp(share, 0.0, 1.0) * static_cast<double>(pod_count)), 0, left);
  };
  const int64_t inference = share_of(options.inference_share, pod_count);
  const int64_t training = share_of(options.training_share, pod_count - inference);

  SeededRandom random(options.seed);
  std::vector<Draft> drafts;
  drafts.reserve(pod_count);
  DraftInference(inference, options, horizon, random, drafts);
  DraftTraining(training, horizon, random, drafts);
  DraftCpu(pod_count - inference - training, horizon, random, drafts);
  // Stable, and names follow the sorted order: arrival, then name, as Workload promises.
  std::stable_sort(drafts.begin(), drafts.end(), [](const Draft& a, const Draft& b) { return a.arrival < b.arrival; });

  Workload workload;
  workload.name = "synthetic:agentic";
  workload.groups = CloudGpuFleet(options.max_nodes_per_group);
  workload.pods.resize(drafts.size());
  const int digits = static_cast<int>(absl::StrCat(std::max<int64_t>(pod_count - 1, 0)).size());
  for (size_t i = 0; i < drafts.size(); ++i) {
    PodSpec& pod = workload.pods[i];
    pod.name = absl::StrFormat("s-%0*d", digits, i);
    pod.arrival = drafts[i].arrival;
    pod.duration = drafts[i].duration;
    pod.gpus = drafts[i].gpus;
    Annotate(drafts[i], pod);
  }
  workload.description = absl::StrCat(
      "synthetic agentic mix, seed ", options.seed, ": ", inference,
      " inference pods in bursts (mean ", options.burst_mean_pods, " pods within a minute; 1/2/4/8 GPUs at 60/25/10/5%, run log-normal "
      "median 90 s",
      options.diurnal_amplitude > 0 ? absl::StrCat("; their rate 1 - ", options.diurnal_amplitude, " cos(day) times the mean") : "",
      "), ",
      training, " training jobs (4 or 8 GPUs, min-link NV required, log-normal median 2 h), ",
      pod_count - inference - training, " pods without GPUs, arrivals over ", horizon / kSecond,
      " s; fleet: CloudGpuFleet, max ", options.max_nodes_per_group, " nodes per group");
  return workload;
}

}  // namespace topofit::sim
