#include "decision/capacity_wait.h"

#include <catch2/catch.hpp>

#include "decision/slowdown.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakePod;

// A 4-GPU pod preferring NVLink; PCIe here (10 GB/s) against the NVSwitch set coming (100 GB/s): with
// the assumed comm_fraction 0.2 it would run 0.8 + 0.2 x 10 = 2.8 times as long here.
constexpr int64_t kHere = 10'000, kComing = 100'000;

GpuDemand Preferring(const char* runtime = nullptr) {
  kube::testing::PodBuilder pod = MakePod().gpus(4).annotation("topofit.io/min-link", "NV");
  if (runtime != nullptr) pod.annotation("topofit.io/expected-runtime", runtime);
  return *DemandOf(pod);
}

TEST_CASE("A pod that does not say how long it runs waits for its capacity up to the bound", "[capacity_wait]") {
  const CapacityWaitPolicy policy;  // expected boot 5 min, max wait 10 min
  REQUIRE(Stretch(kComing, kHere, AssumedCommFraction(Preferring())) == Approx(2.8));
  CHECK(WaitForComingCapacity(Preferring(), kHere, false, kComing, absl::ZeroDuration(), policy));
  CHECK(WaitForComingCapacity(Preferring(), kHere, false, kComing, absl::Minutes(9), policy));
  CHECK_FALSE(WaitForComingCapacity(Preferring(), kHere, false, kComing, absl::Minutes(10), policy));
  CHECK_FALSE(WaitForComingCapacity(Preferring(), kHere, false, kComing, absl::ZeroDuration(),
                                    CapacityWaitPolicy{.max_wait = absl::ZeroDuration()}));
}

TEST_CASE("A pod that says how long it runs waits only while the rest of the boot costs less than the slowdown",
          "[capacity_wait]") {
  const CapacityWaitPolicy policy;
  // 2 minutes of work: 1.8 x 2 = 3.6 minutes lost here. Just after the scale-up 5 minutes of boot are
  // left: place now. Two minutes later 3 are left: wait.
  CHECK_FALSE(WaitForComingCapacity(Preferring("2m"), kHere, false, kComing, absl::ZeroDuration(), policy));
  CHECK(WaitForComingCapacity(Preferring("2m"), kHere, false, kComing, absl::Minutes(2), policy));
  // An hour of work: 108 minutes lost, worth any bounded wait.
  CHECK(WaitForComingCapacity(Preferring("1h"), kHere, false, kComing, absl::ZeroDuration(), policy));
  // A late node (past the expected boot) is waited for until the bound.
  CHECK(WaitForComingCapacity(Preferring("2m"), kHere, false, kComing, absl::Minutes(7), policy));
  CHECK_FALSE(WaitForComingCapacity(Preferring("2m"), kHere, false, kComing, absl::Minutes(10), policy));
}

TEST_CASE("No wait when the set here is good enough, the capacity no better, or the topology required",
          "[capacity_wait]") {
  const CapacityWaitPolicy policy;
  CHECK_FALSE(WaitForComingCapacity(Preferring(), kHere, /*set_meets_ask=*/true, kComing, absl::ZeroDuration(), policy));
  CHECK_FALSE(WaitForComingCapacity(Preferring(), kHere, false, /*coming_mbps=*/kHere, absl::ZeroDuration(), policy));
  CHECK_FALSE(WaitForComingCapacity(Preferring(), kHere, false, /*coming_mbps=*/0, absl::ZeroDuration(), policy));
  const GpuDemand required = *DemandOf(
      MakePod().gpus(4).annotation("topofit.io/min-link", "NV").annotation("topofit.io/topology-policy", "required"));
  CHECK_FALSE(WaitForComingCapacity(required, kHere, false, kComing, absl::ZeroDuration(), policy));
  const GpuDemand plain = *DemandOf(MakePod().gpus(4));
  CHECK_FALSE(WaitForComingCapacity(plain, kHere, false, kComing, absl::ZeroDuration(), policy));
}

TEST_CASE("With nothing coming, only a pod that says its run time asks for capacity, while the whole boot costs less",
          "[capacity_wait]") {
  const CapacityWaitPolicy policy;  // expected boot 5 min, max wait 10 min
  // Not knowing how long it runs, it does not ask (measured: waiting for a node nobody asked for yet costs
  // multi-GPU pods their p95 and gains nothing), however poor the set here.
  CHECK_FALSE(AskForCapacity(Preferring(), kHere, false, kComing, absl::ZeroDuration(), policy));
  // An hour of work: 108 minutes lost here against a 5-minute boot: it asks, until 10 minutes after its
  // first refusal.
  CHECK(AskForCapacity(Preferring("1h"), kHere, false, kComing, absl::ZeroDuration(), policy));
  CHECK(AskForCapacity(Preferring("1h"), kHere, false, kComing, absl::Minutes(9), policy));
  CHECK_FALSE(AskForCapacity(Preferring("1h"), kHere, false, kComing, absl::Minutes(10), policy));
  // 2 minutes of work: 3.6 minutes lost, less than the whole boot it would wait (nothing is coming yet).
  CHECK_FALSE(AskForCapacity(Preferring("2m"), kHere, false, kComing, absl::ZeroDuration(), policy));
  // 3 minutes: 5.4 minutes lost, more than the boot.
  CHECK(AskForCapacity(Preferring("3m"), kHere, false, kComing, absl::ZeroDuration(), policy));
  // A set that meets the ask, capacity no better, a required topology, no topology asked, waiting off.
  CHECK_FALSE(AskForCapacity(Preferring("1h"), kHere, /*set_meets_ask=*/true, kComing, absl::ZeroDuration(), policy));
  CHECK_FALSE(AskForCapacity(Preferring("1h"), kHere, false, /*obtainable_mbps=*/kHere, absl::ZeroDuration(), policy));
  const GpuDemand required = *DemandOf(MakePod().gpus(4).annotation("topofit.io/min-link", "NV")
                                           .annotation("topofit.io/topology-policy", "required")
                                           .annotation("topofit.io/expected-runtime", "1h"));
  CHECK_FALSE(AskForCapacity(required, kHere, false, kComing, absl::ZeroDuration(), policy));
  const GpuDemand plain = *DemandOf(MakePod().gpus(4).annotation("topofit.io/expected-runtime", "1h"));
  CHECK_FALSE(AskForCapacity(plain, kHere, false, kComing, absl::ZeroDuration(), policy));
  CHECK_FALSE(AskForCapacity(Preferring("1h"), kHere, false, kComing, absl::ZeroDuration(),
                             CapacityWaitPolicy{.max_wait = absl::ZeroDuration()}));
}

}  // namespace
}  // namespace topofit::decision
