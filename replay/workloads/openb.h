#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "replay/workload.h"

namespace topofit::sim {

// The Alibaba GPU cluster trace 2023 ("openb", FGD paper, USENIX ATC '23), read in place. How its nodes
// and pods become node groups and PodSpecs, and why: docs/bench-workloads.md.
// Its folder in a traces directory (`topofit bench --traces`, default ./traces).
inline constexpr absl::string_view kOpenbFolder = "alibaba-gpu-v2023";

struct OpenbOptions {
  std::string trace_dir = absl::StrCat("traces/", kOpenbFolder);
  // Any openb_pod_list_*.csv; lists without times (openb_pod_list_multigpu50.csv) need
  // `fixed_interarrival`.
  std::string pod_list = "openb_pod_list_default.csv";
  std::string node_list = "openb_node_list_gpu_node.csv";
  // Nodes Ready at time 0: none, so that all capacity comes from the autoscaler (false), or the trace's
  // own node count of each group (true).
  bool initial_size_from_trace = false;
  // Divides every arrival and duration (> 0), as the FGD paper's simulator compresses the trace's month.
  double time_compression = 1;
  // > 0: the paper's mode: pods submitted in the file's order, pod i at i x this (before compression),
  // the trace's creation times ignored.
  SimTime fixed_interarrival = 0;
  // Running time of every pod of a pod list without times (before compression).
  SimTime untimed_duration = kHour;
  // Pods of two GPUs or more get topofit.io/min-link "NV", with policy "required" when this is set,
  // "preferred" otherwise, and this share of their running time in collectives.
  bool multi_gpu_nv_required = false;
  double multi_gpu_comm_fraction = 0.3;
};

// InvalidArgument naming the file and line on a malformed row; NotFound when a file is missing.
absl::StatusOr<Workload> LoadOpenb(const OpenbOptions& options);

}  // namespace topofit::sim
