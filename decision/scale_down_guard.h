#pragma once

#include <vector>

#include "absl/strings/string_view.h"
#include "decision/filter_memo.h"
#include "decision/node_snapshot.h"
#include "decision/pod_demand.h"
#include "topology/set_quality.h"

namespace topofit::decision {

// Whether a pod bound to a set of quality `bound` may need keeping from cluster-autoscaler's scale-down
// drains (kube::kSafeToEvictAnnotation "false" on the pod, while AnotherNodeGivesItsTopology is false). CA
// decides a busy node is unneeded when its pods fit elsewhere by its own simulation, which counts GPUs and
// never asks the extender: a pod that got the topology it asked for and would refuse (required) or wait
// for (preferred, asking for capacity) any poorer set is evicted only to stay pending and make CA grow the
// node it just removed. Pods that take the best set available now, or whose set already falls short of
// their ask, lose nothing CA cannot give back.
bool KeepFromScaleDownDrain(const GpuDemand& demand, const topology::SetQuality& bound);

// Whether one of the Ready `nodes` other than the pod's own (`own_node`) gives `demand`, from its free GPUs
// now, a set that meets its ask: a drain would move the pod there (the scheduler asks the extender where it
// goes), so CA may consolidate its node. A node with none of its GPUs in use does not count: it is the next
// one CA removes. `memo` may serve every pod judged on the same nodes (one refresh, one CA loop).
bool AnotherNodeGivesItsTopology(const GpuDemand& demand, absl::string_view own_node,
                                 const std::vector<const NodeGpuSnapshot*>& nodes, FilterMemo& memo);

}  // namespace topofit::decision
