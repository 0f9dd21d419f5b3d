#include "replay/workloads/synthetic.h"

#include <catch2/catch.hpp>
#include <map>
#include <tuple>

#include "tests/replay/workloads/workload_testing.h"

namespace topofit::sim {
namespace {

auto Fields(const PodSpec& pod) {
  return std::tie(pod.name, pod.arrival, pod.duration, pod.cpu_milli, pod.memory_mib, pod.gpus, pod.gpu_products,
                  pod.min_link, pod.min_bandwidth, pod.topology_policy, pod.priority, pod.comm_fraction, pod.kind);
}

bool SamePods(const Workload& a, const Workload& b) {
  if (a.pods.size() != b.pods.size()) return false;
  for (size_t i = 0; i < a.pods.size(); ++i) {
    if (Fields(a.pods[i]) != Fields(b.pods[i])) return false;
  }
  return true;
}

SyntheticOptions Options(int64_t pod_count, uint64_t seed) {
  SyntheticOptions options;
  options.pod_count = pod_count;
  options.seed = seed;
  return options;
}

TEST_CASE("synthetic: the same seed gives the same workload, another seed another", "[synthetic]") {
  const Workload first = GenerateSynthetic(Options(5000, 7));
  CHECK(SamePods(first, GenerateSynthetic(Options(5000, 7))));
  CHECK_FALSE(SamePods(first, GenerateSynthetic(Options(5000, 8))));
}

TEST_CASE("synthetic: exactly the requested number of pods, sorted by arrival then name", "[synthetic]") {
  for (int64_t count : {0, 1, 9, 12345}) {
    INFO(count);
    const Workload workload = GenerateSynthetic(Options(count, 1));
    REQUIRE(static_cast<int64_t>(workload.pods.size()) == count);
    CHECK(testing::SortedByArrivalThenName(workload.pods));
  }
  CHECK(GenerateSynthetic(Options(12345, 1)).pods.back().name == "s-12344");
}

TEST_CASE("synthetic: the mix of kinds and GPU counts, and each kind's topology annotations", "[synthetic]") {
  const Workload workload = GenerateSynthetic(Options(20000, 3));
  std::map<std::string, int> by_kind;
  std::map<int, int> inference_by_gpus;
  SimTime last_arrival = 0;
  for (const PodSpec& pod : workload.pods) {
    ++by_kind[pod.kind];
    last_arrival = pod.arrival;
    if (pod.kind == "inference") {
      ++inference_by_gpus[pod.gpus];
      CHECK(pod.duration <= kHour);
      if (pod.gpus >= 4) CHECK(pod.topology_policy == "required");
    } else if (pod.kind == "training") {
      CHECK(pod.gpus >= 4);
      CHECK(pod.min_link == "NV");
      CHECK(pod.topology_policy == "required");
      CHECK(pod.comm_fraction == 0.3);
    } else {
      CHECK(pod.gpus == 0);
    }
  }
  // Shares of pod_count are exact by construction: 85% inference, 3% training, the rest without GPUs.
  CHECK(by_kind == std::map<std::string, int>{{"inference", 17000}, {"training", 600}, {"cpu", 2400}});
  // GPU counts are drawn 60/25/10/5%; with 17,000 draws each share lands within 2 points of its weight.
  CHECK(inference_by_gpus[1] / 17000.0 == Approx(0.60).margin(0.02));
  CHECK(inference_by_gpus[2] / 17000.0 == Approx(0.25).margin(0.02));
  CHECK(inference_by_gpus[4] / 17000.0 == Approx(0.10).margin(0.02));
  CHECK(inference_by_gpus[8] / 17000.0 == Approx(0.05).margin(0.02));
  // The default horizon: 8.64 s per pod, a day for 20,000 pods... two days.
  CHECK(last_arrival < 20000 * SimTime{8640});
  CHECK(last_arrival > 20000 * SimTime{8640} * 9 / 10);
}

// Pods of `kind` arriving within three hours of `hour` o'clock on any day of the horizon.
int ArrivingNear(const Workload& workload, const std::string& kind, int hour) {
  int count = 0;
  for (const PodSpec& pod : workload.pods) {
    const SimTime from_hour = (pod.arrival % kDay - hour * kHour + kDay + kDay / 2) % kDay - kDay / 2;
    if (pod.kind == kind && from_hour >= -3 * kHour && from_hour < 3 * kHour) ++count;
  }
  return count;
}

TEST_CASE("synthetic: --diurnal makes the inference bursts follow the day, and nothing else", "[synthetic]") {
  // 40,000 pods: two days. The rate 1 - A cos(day) has its low at midnight and its high at noon: over the
  // six hours around each, 1 -/+ 0.9 A on average, so about 6:1 at A = 0.8 and 1:1 without.
  SyntheticOptions options = Options(40000, 5);
  const Workload uniform = GenerateSynthetic(options);
  options.diurnal_amplitude = 0.8;
  const Workload diurnal = GenerateSynthetic(options);
  const double uniform_ratio = 1.0 * ArrivingNear(uniform, "inference", 12) / ArrivingNear(uniform, "inference", 0);
  const double diurnal_ratio = 1.0 * ArrivingNear(diurnal, "inference", 12) / ArrivingNear(diurnal, "inference", 0);
  CHECK(uniform_ratio == Approx(1).margin(0.25));
  CHECK(diurnal_ratio > 4);
  CHECK(diurnal_ratio < 9);
  // The same pods of each kind; training and pods without GPUs arrive as they did.
  std::map<std::string, int> uniform_kinds, diurnal_kinds;
  for (const PodSpec& pod : uniform.pods) ++uniform_kinds[pod.kind];
  for (const PodSpec& pod : diurnal.pods) ++diurnal_kinds[pod.kind];
  CHECK(uniform_kinds == diurnal_kinds);
  const double cpu_ratio = 1.0 * ArrivingNear(diurnal, "cpu", 12) / ArrivingNear(diurnal, "cpu", 0);
  CHECK(cpu_ratio == Approx(1).margin(0.25));
  CHECK(diurnal.description.find("cos(day)") != std::string::npos);
  CHECK(uniform.description.find("cos(day)") == std::string::npos);
}

TEST_CASE("synthetic: a million pods, named without heap strings", "[synthetic][scale]") {
  const Workload workload = GenerateSynthetic(Options(1000000, 1));
  REQUIRE(workload.pods.size() == 1000000);
  CHECK(workload.pods.back().name == "s-999999");
  // Names, annotations and kinds all fit libstdc++'s 15-character inline buffer.
  for (const PodSpec& pod : {workload.pods.front(), workload.pods.back()}) {
    CHECK(pod.name.capacity() <= 15);
    CHECK(pod.kind.capacity() <= 15);
  }
}

}  // namespace
}  // namespace topofit::sim
