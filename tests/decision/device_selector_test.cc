#include "decision/device_selector.h"

#include <catch2/catch.hpp>

namespace topofit::decision {
namespace {

kube::SliceDevice A100(const std::string& root) {
  kube::SliceDevice device;
  device.name = "gpu-0";
  device.attributes["productName"].string_value = "NVIDIA A100-SXM4-80GB";
  device.attributes["architecture"].string_value = "Ampere";
  device.attributes["index"].int_value = 0;
  device.attributes["resource.kubernetes.io/pcieRoot"].string_value = root;
  return device;
}

TEST_CASE("CEL selectors of the judged subset: the driver, string attributes, joined by &&", "[device_selector]") {
  struct Row {
    const char* name;
    const char* expression;
    bool matches;  // on an A100 (Ampere) of gpu.nvidia.com under pci0000:10
  };
  const Row rows[] = {
      {"the driver", R"(device.driver == "gpu.nvidia.com")", true},
      {"another driver", R"(device.driver == "sriov.example.com")", false},
      {"product, in the driver's domain (unqualified in the slice)",
       R"(device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB")", true},
      {"architecture, single quotes, no spaces", R"(device.attributes['gpu.nvidia.com'].architecture=='Hopper')", false},
      {"a qualified attribute of another domain",
       R"(device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:10")", true},
      {"an attribute the device lacks", R"(device.attributes["gpu.nvidia.com"].brand == "Nvidia")", false},
      {"a string compared with an int attribute", R"(device.attributes["gpu.nvidia.com"].index == "0")", false},
      {"a conjunction", R"(device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].architecture == "Ampere")", true},
      {"a conjunction one part of which fails",
       R"(device.driver == "gpu.nvidia.com" &&  device.attributes["gpu.nvidia.com"].architecture == "Blackwell")", false},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const absl::StatusOr<DeviceSelector> selector = ParseDeviceSelector(row.expression);
      REQUIRE(selector.ok());
      CHECK(SelectorMatches(*selector, "gpu.nvidia.com", A100("pci0000:10")) == row.matches);
    }
  }
}

TEST_CASE("CEL selectors outside the subset are refused with the expression, never read as matching", "[device_selector]") {
  const char* const outside[] = {
      R"(device.driver == "gpu.nvidia.com" || device.driver == "other")",
      R"(device.attributes["gpu.nvidia.com"].productName != "NVIDIA T4")",
      R"(device.attributes["gpu.nvidia.com"].productName.matches("A100.*"))",
      R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0)",
      R"(device.attributes["gpu.nvidia.com"].index == 0)",
      R"((device.driver == "gpu.nvidia.com"))",
      R"(!(device.driver == "gpu.nvidia.com"))",
      R"(device.attributes["gpu.nvidia.com"].productName == "say \"hi\"")",
      R"(device.driver == "gpu.nvidia.com" &&)",
      "",
      "true",
  };
  for (const char* expression : outside) {
    INFO(expression);
    const absl::StatusOr<DeviceSelector> selector = ParseDeviceSelector(expression);
    REQUIRE_FALSE(selector.ok());
    CHECK(selector.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(std::string(selector.status().message()), Catch::Contains("outside what topofit judges"));
  }
}

}  // namespace
}  // namespace topofit::decision
