#include "decision/capacity_wait.h"

#include <algorithm>

#include "decision/slowdown.h"

namespace topofit::decision {

bool WaitForComingCapacity(const GpuDemand& demand, int64_t set_mbps, bool set_meets_ask, int64_t coming_mbps,
                           absl::Duration since_scale_up, const CapacityWaitPolicy& policy) {
  if (!demand.asks_for_topology() || demand.constraints_required() || set_meets_ask) return false;
  if (since_scale_up >= policy.max_wait) return false;
  const double stretch = Stretch(coming_mbps, set_mbps, AssumedCommFraction(demand));
  if (stretch <= 1) return false;  // the coming nodes give no better set than this one
  if (!demand.expected_runtime) return true;
  const absl::Duration wait = std::max(absl::ZeroDuration(), policy.expected_boot - since_scale_up);
  return wait < (stretch - 1) * *demand.expected_runtime;
}

bool AskForCapacity(const GpuDemand& demand, int64_t set_mbps, bool set_meets_ask, int64_t obtainable_mbps,
                    absl::Duration since_first_refusal, const CapacityWaitPolicy& policy) {
  if (!demand.asks_for_topology() || demand.constraints_required() || set_meets_ask) return false;
  if (!demand.expected_runtime || since_first_refusal >= policy.max_wait) return false;
  const double stretch = Stretch(obtainable_mbps, set_mbps, AssumedCommFraction(demand));
  return stretch > 1 && policy.expected_boot < (stretch - 1) * *demand.expected_runtime;
}

}  // namespace topofit::decision
