#include "replay/workloads/declared_runtimes.h"

#include "absl/strings/str_cat.h"

namespace topofit::sim {

void DeclareRuntimes(Workload& workload) {
  for (PodSpec& pod : workload.pods) {
    if (pod.gpus >= 2 && !pod.runs_until_deleted) pod.expected_runtime = pod.duration;
  }
  absl::StrAppend(&workload.description, "; multi-GPU pods declare their run time");
}

}  // namespace topofit::sim
