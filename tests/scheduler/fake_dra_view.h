#pragma once

// A DraView for the extender's tests: claims by name in namespace `ml`, and every node's slice of 8 GPUs (or
// `gpus_per_node`), GPU i under PCIe root "pci<i/2>".

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/dra_view.h"

namespace topofit::scheduler::testing {

class FakeDraView final : public DraView {
 public:
  std::optional<kube::ResourceClaim> Claim(absl::string_view namespace_name, absl::string_view name) const override {
    auto it = claims.find(std::string(name));
    if (namespace_name != "ml" || it == claims.end()) return std::nullopt;
    return it->second;
  }
  std::vector<decision::SliceGpu> NodeGpus(absl::string_view node) const override {
    std::vector<decision::SliceGpu> gpus;
    for (int i = 0; i < gpus_per_node; ++i) {
      decision::SliceGpu gpu{.index = i, .device = {}};
      gpu.device.name = absl::StrCat(node, "-gpu-", i);
      gpu.device.attributes["index"].int_value = i;
      gpu.device.attributes["resource.kubernetes.io/pcieRoot"].string_value = absl::StrCat("pci", i / 2);
      gpus.push_back(std::move(gpu));
    }
    return gpus;
  }
  const decision::DraGpuClasses& gpu_classes() const override { return classes; }

  std::map<std::string, kube::ResourceClaim> claims;
  int gpus_per_node = 8;
  decision::DraGpuClasses classes;
};

}  // namespace topofit::scheduler::testing
