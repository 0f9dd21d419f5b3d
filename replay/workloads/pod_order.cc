#include "replay/workloads/pod_order.h"

#include <algorithm>
#include <tuple>

namespace topofit::sim {

void SortByArrivalThenName(std::vector<PodSpec>& pods) {
  std::stable_sort(pods.begin(), pods.end(), [](const PodSpec& a, const PodSpec& b) {
    return std::tie(a.arrival, a.name) < std::tie(b.arrival, b.name);
  });
}

}  // namespace topofit::sim
