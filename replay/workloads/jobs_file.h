#pragma once

#include <filesystem>
#include <vector>

#include "absl/status/statusor.h"
#include "replay/workload.h"

namespace topofit::sim {

// A user's jobs (`topofit bench --workload jobs --jobs-file FILE`), as CSV with a header row, one job per
// row; docs/bench-workloads.md, "Your own jobs":
//
//   submit_seconds,pods,gpus_per_pod,cpu,memory,duration_seconds,gang,topology,level
//   0,16,4,64,512Gi,7200,true,required,domain
//   30,1,8,32,256Gi,3600,false,preferred,node
//   45,4,1,8,64Gi,1800,false,none,
//
// (a 64-GPU gang that requires one NVLink domain, an 8-GPU pod that prefers an all-NVLink set, four 1-GPU
// pods.)
// Optional columns: `name` (the job's; default job-<row>), `comm_fraction` (its share of run time in
// collectives; default 0.2 for a job that asks for a topology with two GPUs or more, else 0), `replica`
// (true: its pods run until deleted, `duration_seconds` being how long they are kept). A gang's pods share
// one gang of `pods` members (topofit.io/gang), start together and carry safe-to-evict "false"; its
// topology's level is `domain` (one NVLink domain) or `node`. A job that is not a gang can ask only for the
// `node` level: its pods' GPU sets over NVLink (topofit.io/min-link NV, required or preferred).
// InvalidArgument "<file>:<line>: ..." for a missing column or a malformed field.
absl::StatusOr<Workload> LoadJobsCsv(const std::filesystem::path& path, std::vector<NodeGroupSpec> fleet);

}  // namespace topofit::sim
