#include "decision/nvlink_domain.h"

#include <catch2/catch.hpp>

#include "tests/kube/builders.h"
#include "tests/kube/status_matchers.h"

namespace topofit::decision {
namespace {

using kube::testing::MakeNode;

constexpr const char* kClique = "8d9e3f2a-1b2c-4d5e-9f00-112233445566.7";

TEST_CASE("NvlinkDomainOf takes the first configured label the node carries", "[nvlink_domain]") {
  const NvlinkDomainLabels defaults = NvlinkDomainLabels::Default();
  CHECK(defaults.keys() == std::vector<std::string>{"nvidia.com/gpu.clique", "topology.k8s.aws/ultraserver-id"});

  struct Row {
    const char* name;
    kube::StringMap labels;
    std::optional<NvlinkDomain> domain;
  };
  const Row rows[] = {
      {"a clique", {{"nvidia.com/gpu.clique", kClique}},
       NvlinkDomain{.label_key = "nvidia.com/gpu.clique", .id = {kClique}}},
      {"an UltraServer", {{"topology.k8s.aws/ultraserver-id", "us-0a1b"}},
       NvlinkDomain{.label_key = "topology.k8s.aws/ultraserver-id", .id = {"us-0a1b"}}},
      // a clique is a partition inside the UltraServer: the tighter domain wins
      {"both: the clique first",
       {{"topology.k8s.aws/ultraserver-id", "us-0a1b"}, {"nvidia.com/gpu.clique", kClique}},
       NvlinkDomain{.label_key = "nvidia.com/gpu.clique", .id = {kClique}}},
      {"an empty clique falls through to the next label",
       {{"nvidia.com/gpu.clique", ""}, {"topology.k8s.aws/ultraserver-id", "us-0a1b"}},
       NvlinkDomain{.label_key = "topology.k8s.aws/ultraserver-id", .id = {"us-0a1b"}}},
      {"no domain label", {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}, std::nullopt},
  };
  for (const Row& row : rows) {
    SECTION(row.name) { CHECK(NvlinkDomainOf(row.labels, defaults) == row.domain); }
  }
}

TEST_CASE("NvlinkDomainOf follows the configured order", "[nvlink_domain]") {
  absl::StatusOr<NvlinkDomainLabels> ultraserver_first =
      NvlinkDomainLabels::Create({"topology.k8s.aws/ultraserver-id", "nvidia.com/gpu.clique"});
  REQUIRE_OK(ultraserver_first);
  const kube::StringMap labels = {{"topology.k8s.aws/ultraserver-id", "us-0a1b"}, {"nvidia.com/gpu.clique", kClique}};
  CHECK(NvlinkDomainOf(labels, *ultraserver_first)->label_key == "topology.k8s.aws/ultraserver-id");
  CHECK(ultraserver_first->Contains("nvidia.com/gpu.clique"));
  CHECK_FALSE(ultraserver_first->Contains("kubernetes.io/hostname"));
}

TEST_CASE("NvlinkDomainLabels rejects a list that cannot mean anything", "[nvlink_domain]") {
  CHECK_STATUS(NvlinkDomainLabels::Create({}), absl::StatusCode::kInvalidArgument, "the list is empty");
  CHECK_STATUS(NvlinkDomainLabels::Create({"a", ""}), absl::StatusCode::kInvalidArgument, "an empty label key");
  CHECK_STATUS(NvlinkDomainLabels::Create({"a", "b", "a"}), absl::StatusCode::kInvalidArgument, "a is listed twice");
}

TEST_CASE("GroupDomainShapeOf reads a template's domain label and nodes per domain", "[nvlink_domain]") {
  const NvlinkDomainLabels defaults = NvlinkDomainLabels::Default();
  SECTION("an NVL72 group: 18 trays a rack") {
    absl::StatusOr<std::optional<GroupDomainShape>> shape = GroupDomainShapeOf(
        MakeNode().label("nvidia.com/gpu.clique", kClique).annotation("topofit.io/nodes-per-domain", "18"), defaults);
    REQUIRE_OK(shape);
    REQUIRE(shape->has_value());
    CHECK((*shape)->label_key == "nvidia.com/gpu.clique");
    CHECK((*shape)->nodes_per_domain == 18);
  }
  SECTION("a domain label without a count") {
    absl::StatusOr<std::optional<GroupDomainShape>> shape =
        GroupDomainShapeOf(MakeNode().label("topology.k8s.aws/ultraserver-id", "us-0a1b"), defaults);
    REQUIRE_OK(shape);
    REQUIRE(shape->has_value());
    CHECK((*shape)->label_key == "topology.k8s.aws/ultraserver-id");
    CHECK_FALSE((*shape)->nodes_per_domain.has_value());
  }
  SECTION("a group that forms no domains") {
    absl::StatusOr<std::optional<GroupDomainShape>> shape =
        GroupDomainShapeOf(MakeNode().label("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"), defaults);
    REQUIRE_OK(shape);
    CHECK_FALSE(shape->has_value());
  }
  SECTION("malformed counts") {
    for (const char* count : {"0", "18 nodes", "-1", "100001"}) {
      CHECK_STATUS(
          GroupDomainShapeOf(
              MakeNode().label("nvidia.com/gpu.clique", kClique).annotation("topofit.io/nodes-per-domain", count),
              defaults),
          absl::StatusCode::kInvalidArgument,
          std::string("annotation topofit.io/nodes-per-domain=\"") + count + "\": expected a whole number");
    }
  }
  SECTION("a count on a template without a domain label") {
    CHECK_STATUS(GroupDomainShapeOf(MakeNode().annotation("topofit.io/nodes-per-domain", "18"), defaults),
                 absl::StatusCode::kInvalidArgument,
                 "the template carries no domain label (nvidia.com/gpu.clique, topology.k8s.aws/ultraserver-id)");
  }
}

}  // namespace
}  // namespace topofit::decision
