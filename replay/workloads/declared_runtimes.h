#pragma once

#include "replay/workload.h"

namespace topofit::sim {

// Every multi-GPU pod that runs to completion says exactly its run time (topofit.io/expected-runtime =
// its duration): what declaring buys at best (`topofit bench --runtimes-declared`). A service replica has
// no run time to declare. Appends what it did to the workload's description.
void DeclareRuntimes(Workload& workload);

}  // namespace topofit::sim
