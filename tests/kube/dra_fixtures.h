#pragma once

// tests/data/dra: ResourceSlices and ResourceClaims written for the tests in the shapes of resource.k8s.io's
// types (field names as in k8s.io/api/resource/v1 and v1beta1), as NVIDIA's DRA driver and kube-scheduler
// fill them: resourceslice-v1.json is a100-node-1's pool (gpu-<i> has index i, gpu-7 one MIG part), and
// resourceclaim-v1-allocated.json a claim allocated gpu-2 and gpu-3 there; resourceclaim-v1-extended-resource.json
// the claim kube-scheduler makes for pod server-1's `nvidia.com/gpu: 2` where DRA serves it (KEP-5004),
// allocated gpu-4 and gpu-5. A target that includes this defines TOPOFIT_TEST_DATA_DIR.

#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace topofit::testing {

inline nlohmann::json DraFixture(const std::string& name) {
  std::ifstream file(std::string(TOPOFIT_TEST_DATA_DIR) + "/dra/" + name);
  REQUIRE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  return nlohmann::json::parse(text.str());
}

}  // namespace topofit::testing
