#include "decision/capacity_wait.h"

#include <algorithm>

#include "decision/slowdown.h"

namespace topofit::decision {
namespace {

// Whether waiting `wait` more, `waited` into the bound, for a set of `better_mbps` pays against taking the
// set here: the pod prefers (not requires) a topology this set misses, the better set is better, and
// `wait` < (stretch - 1) x its expected run time. `unknown_runtime` answers for a pod that does not say.
bool WaitPays(const GpuDemand& demand, int64_t set_mbps, bool set_meets_ask, int64_t better_mbps, absl::Duration waited,
              absl::Duration wait, bool unknown_runtime, const CapacityWaitPolicy& policy) {
  if (!demand.asks_for_topology() || demand.constraints_required() || set_meets_ask) return false;
  if (waited >= policy.max_wait) return false;
  const double stretch = Stretch(better_mbps, set_mbps, AssumedCommFraction(demand));
  if (stretch <= 1) return false;  // no better set than this one
  if (!demand.expected_runtime) return unknown_runtime;
  return wait < (stretch - 1) * *demand.expected_runtime;
}

}  // namespace

bool WaitForComingCapacity(const GpuDemand& demand, int64_t set_mbps, bool set_meets_ask, int64_t coming_mbps,
                           absl::Duration since_scale_up, const CapacityWaitPolicy& policy) {
  const absl::Duration boot_left = std::max(absl::ZeroDuration(), policy.expected_boot - since_scale_up);
  return WaitPays(demand, set_mbps, set_meets_ask, coming_mbps, since_scale_up, boot_left, /*unknown_runtime=*/true,
                  policy);
}

bool AskForCapacity(const GpuDemand& demand, int64_t set_mbps, bool set_meets_ask, int64_t obtainable_mbps,
                    absl::Duration since_first_refusal, const CapacityWaitPolicy& policy) {
  return WaitPays(demand, set_mbps, set_meets_ask, obtainable_mbps, since_first_refusal, policy.expected_boot,
                  /*unknown_runtime=*/false, policy);
}

}  // namespace topofit::decision
