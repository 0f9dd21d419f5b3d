#pragma once

// The shapes and random free-GPU cases both allocator benchmarks draw from (allocator_bench and
// peer_compare), so both see exactly the same free sets.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "topology/gpu_set.h"
#include "topology/topology.h"

namespace topofit::bench {

struct Shape {
  std::string name;
  topology::Topology topology;
};

// The topology, or exit(2) with a message: a benchmark cannot run without its shapes.
topology::Topology OrDie(absl::StatusOr<topology::Topology> topology, absl::string_view what);

// dgx1-v100, dgx-a100, hgx-h100, g5.48xlarge, dgx2 from the catalog, and the synthetic mixed-16.
std::vector<Shape> NodeShapes();

// A draw in [0, bound) that is the same on every standard library.
int Below(std::mt19937& rng, int bound);

// `count` random sets of free GPUs among `n`, each of at least `k`.
std::vector<std::vector<int>> RandomFreeIds(int n, int k, int count, uint32_t seed);
std::vector<topology::GpuSet> NodeCases(const topology::Topology& topology, int k, int count, uint32_t seed);

// One seed per (shape, k), so adding a shape does not change another's cases.
uint32_t CaseSeed(size_t shape_index, int k);

}  // namespace topofit::bench
