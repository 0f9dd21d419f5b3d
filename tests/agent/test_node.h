#pragma once

// A g5.48xlarge-like node (8 A10G on PCIe, PHB pairs {0,1} {2,3} {4,5} {6,7}, NUMA 0 and 1) as nvidia-smi
// prints it, and the agent's view of it. Its PCIe-only matrix makes the allocator's choice visible: the
// best pair is always a PHB pair.

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "agent/device_table.h"
#include "agent/gpu_discovery.h"

namespace topofit::agent::testing {

inline std::string Uuid(int index) { return absl::StrCat("GPU-5a170000-0000-4000-8000-00000000000", index); }

// --query-gpu rows for GPUs 0..7; `errored` GPUs print nvidia-smi's error values, `missing` ones no row.
inline std::string G5Query(const std::vector<int>& errored = {}, const std::vector<int>& missing = {}) {
  std::string csv;
  for (int i = 0; i < 8; ++i) {
    if (std::find(missing.begin(), missing.end(), i) != missing.end()) continue;
    const bool error = std::find(errored.begin(), errored.end(), i) != errored.end();
    absl::StrAppend(&csv, i, ", ", Uuid(i), ", NVIDIA A10G, ", error ? "[GPU requires reset]" : absl::StrCat("00000000:00:1", i, ".0"),
                    ", ", error ? "[N/A]" : "23028 MiB", "\n");
  }
  return csv;
}

inline std::string G5Topo() {
  std::ifstream file(std::string(TOPOFIT_TEST_DATA_DIR) + "/nvidia-smi/g5-48xlarge.txt", std::ios::binary);
  REQUIRE(file.good());
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

inline NodeGpus G5Gpus() {
  absl::StatusOr<NodeGpus> gpus = BuildNodeGpus(G5Query(), G5Topo());
  REQUIRE(gpus.ok());
  return *std::move(gpus);
}

inline DeviceSnapshot G5Snapshot() {
  DeviceTable table;
  table.SetDiscovered(G5Gpus());
  return table.Snapshot();
}

inline std::vector<std::string> Uuids(const std::vector<int>& indices) {
  std::vector<std::string> out;
  for (int i : indices) out.push_back(Uuid(i));
  return out;
}

}  // namespace topofit::agent::testing
