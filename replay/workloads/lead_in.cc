#include "replay/workloads/lead_in.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace topofit::sim {

Workload WithLeadIn(Workload workload, SimTime lead_in) {
  if (lead_in <= 0 || workload.pods.empty()) return workload;
  SimTime first = workload.pods.front().arrival;
  for (const PodSpec& pod : workload.pods) first = std::min(first, pod.arrival);
  for (PodSpec& pod : workload.pods) {
    if (pod.arrival > first) {
      pod.arrival += lead_in;
    } else if (pod.runs_until_deleted) {
      pod.duration += lead_in;
    }
  }
  // Sorted by arrival (then name) as before: the first arrivals stay first and the rest keep their order.
  workload.measure_from = first + lead_in;
  absl::StrAppendFormat(&workload.description,
                        "; lead-in of %d min: the pods of the first arrival time ran before measuring began",
                        lead_in / kMinute);
  return workload;
}

}  // namespace topofit::sim
