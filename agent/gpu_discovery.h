#pragma once

// What nvidia-smi says about this node's GPUs:
//
//   nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,memory.total --format=csv,noheader
//       0, GPU-5a17..., NVIDIA A100-SXM4-80GB, 00000000:07:00.0, 81920 MiB
//   nvidia-smi topo -m
//       the link matrix and NUMA affinity, read by topology/nvidia_smi.h
//
// joined into one topology whose GPUs carry their UUIDs, PCI addresses, memory and NUMA nodes: the JSON
// descriptor the agent publishes (docs/topology-descriptor.md) and the map from device IDs (UUIDs) to
// the GPU indices `topofit.io/gpu-ids` names.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "agent/command_runner.h"
#include "topology/topology.h"

namespace topofit::agent {

// One row of --query-gpu.
struct QueriedGpu {
  int index = 0;
  std::string uuid;
  std::string name;        // "NVIDIA A100-SXM4-80GB"
  std::string pci_bus_id;  // "00000000:07:00.0"
  int64_t memory_mib = 0;  // 0 when nvidia-smi printed N/A
  // nvidia-smi printed an error for one of its fields ("[GPU requires reset]", "ERR!", "Unknown Error"):
  // the GPU is listed but not usable.
  bool error = false;
};

// The rows of the --query-gpu CSV above, in index order. InvalidArgument (naming the line) for a row that
// does not have five fields, an index that is not a number or repeats, a UUID that is not "GPU-...", or no
// rows at all.
absl::StatusOr<std::vector<QueriedGpu>> ParseGpuQuery(absl::string_view csv);

struct NodeGpus {
  std::vector<QueriedGpu> queried;
  topology::Topology topology;  // GPU i is nvidia-smi's index i, its uuid set
};

// Joins the two outputs. InvalidArgument when either does not parse, the query's indices are not 0..n-1,
// or the two disagree on the GPU count.
absl::StatusOr<NodeGpus> BuildNodeGpus(absl::string_view query_csv, absl::string_view topo_text);

// Runs nvidia-smi through `runner`. Errors name the command that failed.
class GpuDiscovery {
 public:
  // `nvidia_smi` is a path or a name looked up on PATH. `runner` must outlive this object.
  GpuDiscovery(CommandRunner& runner, std::string nvidia_smi) : runner_(runner), nvidia_smi_(std::move(nvidia_smi)) {}

  // Both commands, joined.
  absl::StatusOr<NodeGpus> Discover();
  // The query alone: the periodic health check.
  absl::StatusOr<std::vector<QueriedGpu>> Query();

 private:
  absl::StatusOr<std::string> RunQuery();

  CommandRunner& runner_;
  const std::string nvidia_smi_;
};

// Health of each of `known` (by position) after a re-check: Unhealthy when the query failed, when the GPU's
// UUID is no longer listed, or when its row shows an error.
std::vector<bool> HealthAfterCheck(const std::vector<QueriedGpu>& known,
                                   const absl::StatusOr<std::vector<QueriedGpu>>& now);

}  // namespace topofit::agent
