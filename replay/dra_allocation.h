#pragma once

// kube-scheduler's DRA allocator (k8s.io/dynamic-resource-allocation/structured), as the replay's
// `--gpu-api dra` worlds use it for a claim of `count` GPUs of NVIDIA's driver with neither selectors nor
// constraints. The allocator walks the node's ResourceSlices in order and each slice's devices in the
// order they are published, and takes the first free devices that meet the request: first fit, with no
// notion of links between them. NVIDIA's driver publishes a node's GPUs in index order, so that is the
// lowest free indices.

#include "topology/gpu_set.h"

namespace topofit::sim {

// The `gpus` lowest ids of `free`, or every one of them when there are fewer.
topology::GpuSet DraFirstFit(topology::GpuSet free, int gpus);

}  // namespace topofit::sim
