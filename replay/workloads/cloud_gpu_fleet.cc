#include "replay/workloads/cloud_gpu_fleet.h"

#include <cstdint>

namespace topofit::sim {
namespace {

struct Instance {
  const char* shape;        // the catalog alias, also the node group's name
  const char* gpu_product;  // the catalog shape's nvidia.com/gpu.product
  int gpus;
  int vcpus;
  int64_t memory_gib;
  double price_per_hour;  // AWS us-east-1 on-demand, 2024 list price
};

// AWS lowered P4 and P5 prices in 2025; the bench compares policies on one price list, so the ratios
// between shapes matter more than the absolute figures.
constexpr Instance kInstances[] = {
    {"p5.48xlarge", "NVIDIA-H100-80GB-HBM3", 8, 192, 2048, 98.32},
    {"p4d.24xlarge", "NVIDIA-A100-SXM4-40GB", 8, 96, 1152, 32.77},
    {"g6e.48xlarge", "NVIDIA-L40S", 8, 192, 1536, 30.131},
    {"g5.48xlarge", "NVIDIA-A10G", 8, 192, 768, 16.288},
    {"g4dn.12xlarge", "Tesla-T4", 4, 48, 192, 3.912},
    {"m5.8xlarge", "", 0, 32, 128, 1.536},
};

constexpr int64_t kReservedMilliCpu = 1000;
constexpr int64_t kReservedMemoryMib = 4 * 1024;

}  // namespace

std::vector<NodeGroupSpec> CloudGpuFleet(int max_nodes_per_group) {
  std::vector<NodeGroupSpec> groups;
  for (const Instance& instance : kInstances) {
    NodeGroupSpec group;
    group.name = instance.shape;
    group.shape = instance.gpus > 0 ? instance.shape : "";
    group.gpu_product = instance.gpu_product;
    group.gpus = instance.gpus;
    group.cpu_milli = instance.vcpus * int64_t{1000} - kReservedMilliCpu;
    group.memory_mib = instance.memory_gib * 1024 - kReservedMemoryMib;
    group.max_size = max_nodes_per_group;
    group.price_per_hour = instance.price_per_hour;
    // GPU nodes are tainted, as GKE does and EKS GPU setups commonly do, so pods without GPUs stay on the
    // CPU group (pods with GPUs tolerate it: ExtendedResourceToleration).
    if (instance.gpus > 0) group.taints = {"nvidia.com/gpu=present:NoSchedule"};
    groups.push_back(std::move(group));
  }
  return groups;
}

}  // namespace topofit::sim
