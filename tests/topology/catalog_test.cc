#include "topology/catalog.h"

#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "topology/allocator.h"

namespace topofit::topology {
namespace {

using Labels = std::map<std::string, std::string, std::less<>>;

Topology Shape(absl::string_view name) {
  absl::StatusOr<Topology> topology = CatalogShape(name);
  INFO(name << ": " << topology.status().ToString());
  REQUIRE(topology.ok());
  return *std::move(topology);
}

Link LinkOf(const Topology& topology, int a, int b) { return topology.link(GpuId{a}, GpuId{b}); }

std::vector<int> IslandSizes(const Topology& topology) {
  std::vector<int> sizes;
  for (GpuSet island : topology.NvLinkIslands()) sizes.push_back(island.size());
  return sizes;
}

TEST_CASE("every catalog shape builds, with its product's facts", "[catalog]") {
  const std::vector<absl::string_view> names = CatalogShapeNames();
  CHECK(names.size() >= 14);
  for (absl::string_view name : names) {
    INFO(name);
    const Topology topology = Shape(name);
    CHECK(topology.source() == absl::StrCat("catalog:", name));
    CHECK_FALSE(topology.domain().has_value());
    for (const GpuInfo& gpu : topology.gpus()) {
      CHECK_FALSE(gpu.product.empty());
      CHECK(gpu.memory_mib > 0);
      CHECK(gpu.numa_node >= 0);
    }
  }
}

TEST_CASE("catalog shapes have their GPU counts and NVSwitch exactly where the board has one", "[catalog]") {
  struct Row {
    const char* shape;
    int gpus;
    bool nvswitch;
    const char* token;  // GPU0-GPU1
  };
  const Row rows[] = {
      {"dgx1-p100", 8, false, "NV1"},        {"dgx1-v100", 8, false, "NV1"},
      {"dgx2", 16, true, "NV6"},             {"dgx-a100", 8, true, "NV12"},
      {"hgx-h100", 8, true, "NV18"},         {"hgx-h200", 8, true, "NV18"},
      {"hgx-b200", 8, true, "NV18"},         {"gb200-nvl72-node", 4, true, "NV18"},
      {"g5.48xlarge", 8, false, "PHB"},      {"g6e.48xlarge", 8, false, "PHB"},
      {"g6.48xlarge", 8, false, "PHB"},      {"g4dn.12xlarge", 4, false, "PHB"},
      {"g5.12xlarge", 4, false, "PHB"},      {"rtx8000-nvlink-4x", 4, false, "NODE"},
  };
  for (const Row& row : rows) {
    INFO(row.shape);
    const Topology topology = Shape(row.shape);
    CHECK(topology.gpu_count() == row.gpus);
    CHECK(topology.has_nvswitch() == row.nvswitch);
    CHECK(LinkToken(LinkOf(topology, 0, 1)) == row.token);
  }
}

TEST_CASE("catalog shapes carry link generations from their products", "[catalog]") {
  CHECK(Shape("dgx1-p100").nvlink_generation() == 1);
  CHECK(Shape("dgx1-v100").nvlink_generation() == 2);
  CHECK(Shape("dgx-a100").nvlink_generation() == 3);
  CHECK(Shape("dgx-a100").pcie_generation() == 4);
  CHECK(Shape("hgx-h100").nvlink_generation() == 4);
  CHECK(Shape("hgx-b200").nvlink_generation() == 5);
  CHECK(Shape("gb200-nvl72-node").nvlink_generation() == 5);
  CHECK(Shape("g4dn.12xlarge").pcie_generation() == 3);
}

TEST_CASE("DGX-1 V100 is the hybrid cube-mesh with doubled links", "[catalog]") {
  const Topology dgx1 = Shape("dgx1-v100");
  CHECK(LinkToken(LinkOf(dgx1, 0, 3)) == "NV2");
  CHECK(LinkToken(LinkOf(dgx1, 0, 1)) == "NV1");
  CHECK(LinkToken(LinkOf(dgx1, 0, 4)) == "NV2");
  CHECK(LinkOf(dgx1, 0, 5).link_class == LinkClass::kSys);
  // Six NVLinks per V100: every GPU's bonded links add up to six.
  for (int a = 0; a < 8; ++a) {
    int links = 0;
    for (int b = 0; b < 8; ++b) {
      if (a != b) links += LinkOf(dgx1, a, b).nvlinks;
    }
    INFO("GPU" << a);
    CHECK(links == 6);
  }
  CHECK(dgx1.gpu(GpuId{3}).numa_node == 0);
  CHECK(dgx1.gpu(GpuId{4}).numa_node == 1);
}

TEST_CASE("DGX-1 P100 has four single links per GPU", "[catalog]") {
  const Topology dgx1 = Shape("dgx1-p100");
  for (int a = 0; a < 8; ++a) {
    int links = 0;
    for (int b = 0; b < 8; ++b) {
      if (a != b) links += LinkOf(dgx1, a, b).nvlinks;
    }
    INFO("GPU" << a);
    CHECK(links == 4);
  }
  CHECK(LinkToken(LinkOf(dgx1, 3, 7)) == "NV1");
  CHECK(LinkOf(dgx1, 3, 4).link_class == LinkClass::kSys);
}

TEST_CASE("RTX 8000 pairs are bridged 0-3 and 1-2 only", "[catalog]") {
  const Topology rtx = Shape("rtx8000-nvlink-4x");
  CHECK(LinkToken(LinkOf(rtx, 0, 3)) == "NV2");
  CHECK(LinkToken(LinkOf(rtx, 1, 2)) == "NV2");
  CHECK(LinkOf(rtx, 0, 1).link_class != LinkClass::kNvLink);
  CHECK(LinkOf(rtx, 0, 2).link_class == LinkClass::kSys);
}

TEST_CASE("NVLink islands of catalog shapes", "[catalog]") {
  CHECK(IslandSizes(Shape("dgx1-v100")) == std::vector<int>{8});
  CHECK(IslandSizes(Shape("dgx1-p100")) == std::vector<int>{8});
  CHECK(IslandSizes(Shape("dgx2")) == std::vector<int>{16});
  CHECK(IslandSizes(Shape("rtx8000-nvlink-4x")) == std::vector<int>{2, 2});
  CHECK(Shape("rtx8000-nvlink-4x").NvLinkIslands()[0] == GpuSet::FromMask(0b1001));
  CHECK(IslandSizes(Shape("g5.48xlarge")) == std::vector<int>(8, 1));
}

TEST_CASE("PCIe-only shapes split their GPUs across NUMA nodes", "[catalog]") {
  const Topology g5 = Shape("g5.48xlarge");
  CHECK(LinkOf(g5, 0, 3).link_class == LinkClass::kPhb);
  CHECK(LinkOf(g5, 4, 7).link_class == LinkClass::kPhb);
  CHECK(LinkOf(g5, 3, 4).link_class == LinkClass::kSys);
  CHECK(g5.gpu(GpuId{3}).numa_node == 0);
  CHECK(g5.gpu(GpuId{4}).numa_node == 1);
  // Single-socket sizes: one NUMA node, every pair under the one root complex.
  const Topology g4dn = Shape("g4dn.12xlarge");
  CHECK(LinkOf(g4dn, 0, 3).link_class == LinkClass::kPhb);
  CHECK(g4dn.gpu(GpuId{3}).numa_node == 0);
}

TEST_CASE("catalog aliases resolve to their shapes and variants", "[catalog]") {
  struct Row {
    const char* alias;
    const char* source;
    const char* product;  // GPU0's product
  };
  const Row rows[] = {
      {"p3.16xlarge", "catalog:dgx1-v100", "Tesla-V100-SXM2-16GB"},
      {"p4d.24xlarge", "catalog:dgx-a100", "NVIDIA-A100-SXM4-40GB"},
      {"p4de.24xlarge", "catalog:dgx-a100", "NVIDIA-A100-SXM4-80GB"},
      {"p5.48xlarge", "catalog:hgx-h100", "NVIDIA-H100-80GB-HBM3"},
      {"a3-highgpu-8g", "catalog:hgx-h100", "NVIDIA-H100-80GB-HBM3"},
      {"p5e.48xlarge", "catalog:hgx-h200", "NVIDIA-H200"},
      {"p5en.48xlarge", "catalog:hgx-h200", "NVIDIA-H200"},
      {"P4D.24XLARGE", "catalog:dgx-a100", "NVIDIA-A100-SXM4-40GB"},  // case-insensitive
      {"DGX-A100", "catalog:dgx-a100", "NVIDIA-A100-SXM4-40GB"},
  };
  for (const Row& row : rows) {
    INFO(row.alias);
    const Topology topology = Shape(row.alias);
    CHECK(topology.source() == row.source);
    CHECK(topology.gpu(GpuId{0}).product == row.product);
  }
  // p4de's 80GB comes from the alias, not the shape's default.
  CHECK(Shape("p4de.24xlarge").gpu(GpuId{0}).memory_mib == 80 * 1024);
  CHECK(Shape("p4d.24xlarge").gpu(GpuId{0}).memory_mib == 40 * 1024);
}

TEST_CASE("an unknown catalog name is NotFound and lists the known ones", "[catalog]") {
  absl::StatusOr<Topology> topology = CatalogShape("dgx-9000");
  REQUIRE_FALSE(topology.ok());
  CHECK(topology.status().code() == absl::StatusCode::kNotFound);
  CHECK(absl::StrContains(topology.status().message(), "dgx-a100"));
  CHECK(absl::StrContains(topology.status().message(), "p4d.24xlarge"));
}

TEST_CASE("topology from node labels", "[catalog]") {
  struct Row {
    const char* name;
    Labels labels;
    int allocatable;
    const char* shape;               // "" for the fallback
    int gpus;
    const char* reason_substring;
    std::optional<std::string> domain;
    const char* product = "";        // GPU0's product, when checked
  };
  const Row rows[] = {
      {"instance type wins over the product path",
       {{"node.kubernetes.io/instance-type", "p3.16xlarge"}, {"nvidia.com/gpu.product", "Tesla-V100-SXM2-16GB"},
        {"nvidia.com/gpu.count", "8"}},
       0, "dgx1-v100", 8, "instance type p3.16xlarge",
       std::nullopt, "Tesla-V100-SXM2-16GB"},
      {"instance type alias with the node's product refining the variant",
       {{"node.kubernetes.io/instance-type", "p4d.24xlarge"}, {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
        {"nvidia.com/gpu.count", "8"}},
       8, "dgx-a100", 8, "dgx-a100", std::nullopt, "NVIDIA-A100-SXM4-80GB"},
      {"A100-SXM4 x 8 by product and count",
       {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}, {"nvidia.com/gpu.count", "8"}}, 0, "dgx-a100", 8,
       "8 x A100-SXM", std::nullopt, "NVIDIA-A100-SXM4-80GB"},
      {"H100 HBM3 x 8 by product and allocatable",
       {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}, 8, "hgx-h100", 8, "hgx-h100", std::nullopt},
      {"V100-SXM2 x 16 is a DGX-2",
       {{"nvidia.com/gpu.product", "Tesla-V100-SXM2-32GB"}, {"nvidia.com/gpu.count", "16"}}, 16, "dgx2", 16,
       "dgx2", std::nullopt},
      {"GB200 x 4 with a clique sets the domain",
       {{"nvidia.com/gpu.product", "NVIDIA-GB200"}, {"nvidia.com/gpu.count", "4"},
        {"nvidia.com/gpu.clique", "8d9e3f2a-1b2c-4d5e-9f00-112233445566.7"}},
       4, "gb200-nvl72-node", 4, "gb200-nvl72-node", "8d9e3f2a-1b2c-4d5e-9f00-112233445566.7"},
      {"count label disagrees with the instance type: fallback, saying why",
       {{"node.kubernetes.io/instance-type", "p4d.24xlarge"}, {"nvidia.com/gpu.count", "4"}}, 4, "", 4,
       "8 GPUs, but nvidia.com/gpu.count says 4", std::nullopt},
      {"allocatable disagrees with the product's shape: fallback",
       {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}, 4, "", 4, "no catalog shape has 4 x H100-SXM",
       std::nullopt, "NVIDIA-H100-80GB-HBM3"},
      {"product label disagrees with the instance type: fallback",
       {{"node.kubernetes.io/instance-type", "p5.48xlarge"}, {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"}},
       8, "", 8, "nvidia.com/gpu.product says NVIDIA-A100-SXM4-40GB", std::nullopt},
      {"unknown product: PCIe-only fallback with the label's count",
       {{"nvidia.com/gpu.product", "NVIDIA-Z900"}, {"nvidia.com/gpu.count", "6"}}, 0, "", 6,
       "unknown product NVIDIA-Z900", std::nullopt, "NVIDIA-Z900"},
      {"a general PCIe card does not promise a shape: fallback",
       {{"nvidia.com/gpu.product", "NVIDIA-L40S"}, {"nvidia.com/gpu.count", "8"}}, 8, "", 8,
       "no catalog shape has 8 x L40S", std::nullopt, "NVIDIA-L40S"},
      {"unknown instance type and no product: fallback from allocatable",
       {{"node.kubernetes.io/instance-type", "m7i.large"}}, 2, "", 2, "m7i.large is not in the catalog",
       std::nullopt},
      {"clique label on a fallback still sets the domain",
       {{"nvidia.com/gpu.clique", "cluster.1"}}, 4, "", 4, "SYS between every pair", "cluster.1"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    absl::StatusOr<LabelledTopology> result = TopologyFromLabels(row.labels, row.allocatable);
    INFO(result.status().ToString());
    REQUIRE(result.ok());
    CHECK(result->shape == row.shape);
    CHECK(result->fallback == (std::string(row.shape).empty()));
    CHECK(result->topology.gpu_count() == row.gpus);
    INFO(result->reason);
    CHECK(absl::StrContains(result->reason, row.reason_substring));
    CHECK(result->topology.domain() ==
          (row.domain ? std::optional<DomainId>(DomainId{*row.domain}) : std::optional<DomainId>()));
    if (std::string(row.product).size() > 0) CHECK(result->topology.gpu(GpuId{0}).product == row.product);
    if (result->fallback) {
      CHECK(result->topology.source() == "fallback");
      CHECK_FALSE(result->topology.warnings().empty());
      CHECK(result->topology.NvLinkIslands().size() == static_cast<size_t>(row.gpus));
      CHECK(result->topology.link(GpuId{0}, GpuId{1}).link_class == LinkClass::kSys);
    } else {
      CHECK(result->topology.source() == absl::StrCat("catalog:", row.shape));
    }
  }
}

TEST_CASE("a fallback keeps the product's facts when the product is known", "[catalog]") {
  absl::StatusOr<LabelledTopology> result =
      TopologyFromLabels({{"nvidia.com/gpu.product", "NVIDIA-L40S"}, {"nvidia.com/gpu.count", "2"}}, 0);
  REQUIRE(result.ok());
  CHECK(result->fallback);
  CHECK(result->topology.gpu(GpuId{1}).memory_mib == 48 * 1024);
  CHECK(result->topology.pcie_generation() == 4);
}

TEST_CASE("labels that say nothing about GPUs are an error", "[catalog]") {
  struct Row {
    const char* name;
    Labels labels;
    int allocatable;
  };
  const Row rows[] = {
      {"no labels and 0 GPUs", {}, 0},
      {"a product but no count", {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}}, 0},
      {"a zero count label", {{"nvidia.com/gpu.count", "0"}}, 0},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    absl::StatusOr<LabelledTopology> result = TopologyFromLabels(row.labels, row.allocatable);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("a GPU count above the largest node is refused before anything is sized from it", "[catalog][hostile]") {
  // 16,000 or 65,536 built a count x count link matrix (seconds and hundreds of MB) before the 16-GPU
  // limit refused it (issue 15).
  struct Row {
    const char* name;
    Labels labels;
    int allocatable;
    const char* message;
  };
  const Row rows[] = {
      {"count label, unknown product", {{"nvidia.com/gpu.count", "65536"}, {"nvidia.com/gpu.product", "X"}}, 0,
       "nvidia.com/gpu.count says 65536 GPUs; topofit models nodes of up to 16"},
      {"count label beyond int", {{"nvidia.com/gpu.count", "2147483647"}}, 8,
       "nvidia.com/gpu.count says 2147483647 GPUs"},
      {"allocatable only", {}, 16000, "allocatable nvidia.com/gpu says 16000 GPUs"},
      {"one past the limit", {{"nvidia.com/gpu.count", "17"}}, 0, "says 17 GPUs"},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    absl::StatusOr<LabelledTopology> result = TopologyFromLabels(row.labels, row.allocatable);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(result.status().message(), row.message));
  }
  CHECK(TopologyFromLabels({{"nvidia.com/gpu.count", "16"}}, 0).ok());
}

TEST_CASE("the allocator on catalog shapes", "[catalog]") {
  SECTION("dgx1-v100, all free, 4 GPUs: an NVLink-connected quad, one CPU half") {
    const Topology dgx1 = Shape("dgx1-v100");
    absl::StatusOr<Allocation> chosen = Allocate(dgx1, dgx1.all_gpus(), AllocationRequest{.gpus = 4});
    REQUIRE(chosen.ok());
    CHECK(chosen->quality.weakest == LinkClass::kNvLink);
    // The only all-NVLink quads are the halves; ids break the tie.
    CHECK(chosen->gpus == GpuSet::FromMask(0x0f));
  }
  SECTION("dgx1-v100 asked for NV between 5 GPUs: no such set") {
    const Topology dgx1 = Shape("dgx1-v100");
    absl::StatusOr<FitResult> fit =
        Fit(dgx1, dgx1.all_gpus(), AllocationRequest{.gpus = 5, .min_link = LinkClass::kNvLink});
    REQUIRE(fit.ok());
    CHECK_FALSE(fit->fits());
  }
  SECTION("g5.48xlarge, all free, 4 GPUs: one NUMA half") {
    const Topology g5 = Shape("g5.48xlarge");
    absl::StatusOr<Allocation> chosen = Allocate(g5, g5.all_gpus(), AllocationRequest{.gpus = 4});
    REQUIRE(chosen.ok());
    CHECK(chosen->quality.weakest == LinkClass::kPhb);
    CHECK((chosen->gpus == GpuSet::FromMask(0x0f) || chosen->gpus == GpuSet::FromMask(0xf0)));
  }
  SECTION("rtx8000, 2 GPUs: a bridged pair") {
    const Topology rtx = Shape("rtx8000-nvlink-4x");
    absl::StatusOr<Allocation> chosen = Allocate(rtx, rtx.all_gpus(), AllocationRequest{.gpus = 2});
    REQUIRE(chosen.ok());
    CHECK(chosen->quality.weakest == LinkClass::kNvLink);
    CHECK((chosen->gpus == GpuSet::FromMask(0b1001) || chosen->gpus == GpuSet::FromMask(0b0110)));
  }
  SECTION("hgx-h100 with GPUs 0 and 5 taken, 6 GPUs: any six, all NVSwitch") {
    const Topology hgx = Shape("hgx-h100");
    const GpuSet free = hgx.all_gpus().without(GpuSet::FromMask(0b100001));
    absl::StatusOr<Allocation> chosen = Allocate(hgx, free, AllocationRequest{.gpus = 6});
    REQUIRE(chosen.ok());
    CHECK(chosen->gpus == free);
    CHECK(chosen->quality.weakest == LinkClass::kNvLink);
  }
}

}  // namespace
}  // namespace topofit::topology
