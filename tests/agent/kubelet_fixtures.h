#pragma once

// The kubelet wire fixtures (../shared/fixtures/kubelet: *.bin encoded with the upstream protos, *.json the
// same messages as protobuf JSON with proto field names), read in place, never copied into the project.
// $TOPOFIT_SHARED_DIR overrides where ../shared is. Absent: the tests say they skipped, unless $CI is set,
// when they fail.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace topofit::agent::testing {

inline std::filesystem::path KubeletFixtureDir() {
  const char* shared = std::getenv("TOPOFIT_SHARED_DIR");
  return std::filesystem::path(shared != nullptr ? shared : TOPOFIT_DEFAULT_SHARED_DIR) / "fixtures" / "kubelet";
}

inline bool HaveKubeletFixtures() {
  if (std::filesystem::is_directory(KubeletFixtureDir())) return true;
  if (std::getenv("CI") != nullptr) FAIL("no kubelet fixtures at " << KubeletFixtureDir().string() << " (CI is set)");
  WARN("skipped: no kubelet fixtures at " << KubeletFixtureDir().string());
  return false;
}

inline std::string ReadFixture(const std::string& name) {
  const std::filesystem::path path = KubeletFixtureDir() / name;
  std::ifstream file(path, std::ios::binary);
  INFO(path.string());
  REQUIRE(file.good());
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// uuids.json: the GPU UUIDs the fixtures use, by index.
inline std::vector<std::string> FixtureUuids() {
  return nlohmann::json::parse(ReadFixture("uuids.json"))["gpu_uuids_by_index"].get<std::vector<std::string>>();
}

}  // namespace topofit::agent::testing
