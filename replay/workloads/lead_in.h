#pragma once

// A trace that starts in the middle of a running service starts the replay from an empty cluster: the
// deployments' replicas of the trace's first moment all arrive at once and wait for cold nodes, and every
// policy's pending figures are those boots (the Azure LLM trace: 27% of its pods in its first minute). A
// lead-in gives the cluster time to come to run them before measuring begins: the pods of the first
// arrival time arrive at 0 as before, every later arrival and every service's end moves `lead_in` later,
// and the workload is measured from `lead_in` (Workload::measure_from). Pure.

#include "replay/workload.h"

namespace topofit::sim {

// `workload` with a lead-in of `lead_in` (> 0; 0 returns it unchanged). A service replica of the first
// arrival time (runs_until_deleted) runs `lead_in` longer, so it still ends when the trace says; a batch pod
// of that time keeps its run time.
Workload WithLeadIn(Workload workload, SimTime lead_in);

}  // namespace topofit::sim
