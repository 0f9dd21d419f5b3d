#include "topology/occupancy.h"

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "topology/combinations.h"
#include "topology/set_quality.h"

namespace topofit::topology {

absl::StatusOr<GpuSet> PessimisticOccupancy(const Topology& topology, GpuSet free, int count) {
  if (!topology.all_gpus().contains(free)) {
    return absl::InvalidArgumentError(absl::StrCat("GPUs {", free.ToString(), "} are not all on this node"));
  }
  if (count < 0 || count > free.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(count, " GPUs held by other pods, but only ", free.size(), " are not ours"));
  }
  const SetQualityTable& table = topology.quality();
  std::optional<GpuSet> worst;
  int64_t worst_cohesion = 0;
  // Subsets come in increasing position order, so keeping the first minimum keeps the lowest ids.
  ForEachSubsetOfSize(free, count, [&](GpuSet taken) {
    const int64_t cohesion = table.Cohesion(free.without(taken));
    if (!worst || cohesion < worst_cohesion) {
      worst = taken;
      worst_cohesion = cohesion;
    }
  });
  return *worst;
}

}  // namespace topofit::topology
