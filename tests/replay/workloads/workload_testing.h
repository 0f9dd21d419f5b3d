#pragma once

// Helpers the workload tests share: the pod order, where the shared traces are, a scratch directory for hand-written
// trace files, and a node group's topology as the extender and the expander would resolve it.

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "replay/workload.h"
#include "topology/catalog.h"

namespace topofit::sim::testing {

// The order Workload promises (strictly, since names are unique).
inline bool SortedByArrivalThenName(const std::vector<PodSpec>& pods) {
  for (size_t i = 1; i < pods.size(); ++i) {
    if (std::tie(pods[i - 1].arrival, pods[i - 1].name) >= std::tie(pods[i].arrival, pods[i].name)) return false;
  }
  return true;
}

// TOPOFIT_SHARED_DIR when set (ctest sets it), else the build's default.
inline std::filesystem::path SharedDir() {
  const char* shared = std::getenv("TOPOFIT_SHARED_DIR");
  return std::filesystem::path(shared != nullptr ? shared : TOPOFIT_DEFAULT_SHARED_DIR);
}

// A directory removed with the object, for trace files a test writes.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : dir_(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() { std::filesystem::remove_all(dir_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  void Write(const std::string& name, const std::string& content) const { std::ofstream(dir_ / name) << content; }
  std::string path() const { return dir_.string(); }

 private:
  std::filesystem::path dir_;
};

// The labels a node of `group` carries, through topology::TopologyFromLabels.
inline absl::StatusOr<topology::LabelledTopology> GroupTopology(const NodeGroupSpec& group) {
  std::map<std::string, std::string, std::less<>> labels;
  if (!group.shape.empty()) labels[std::string(topology::kInstanceTypeLabel)] = group.shape;
  if (!group.gpu_product.empty()) labels[std::string(topology::kGpuProductLabel)] = group.gpu_product;
  labels[std::string(topology::kGpuCountLabel)] = std::to_string(group.gpus);
  return topology::TopologyFromLabels(labels, group.gpus);
}

}  // namespace topofit::sim::testing
