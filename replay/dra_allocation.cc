#include "replay/dra_allocation.h"

namespace topofit::sim {

topology::GpuSet DraFirstFit(topology::GpuSet free, int gpus) {
  topology::GpuSet chosen;
  for (topology::GpuId id : free.ids()) {
    if (chosen.size() >= gpus) break;
    chosen = chosen.with(id);
  }
  return chosen;
}

}  // namespace topofit::sim
