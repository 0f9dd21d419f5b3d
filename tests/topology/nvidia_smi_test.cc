#include "topology/nvidia_smi.h"

#include <catch2/catch.hpp>

#include "tests/kube/status_matchers.h"
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace topofit::topology {
namespace {

// The outputs under tests/data/nvidia-smi are written the way drivers print them (tabs, " X " cells,
// legends); see each TEST_CASE for the machine they model.
std::string ReadSample(const std::string& name) {
  std::ifstream file(std::string(TOPOFIT_TEST_DATA_DIR) + "/nvidia-smi/" + name, std::ios::binary);
  REQUIRE(file.good());
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

Topology ParseSample(const std::string& name, const std::string& product) {
  absl::StatusOr<Topology> topology = ParseNvidiaSmiTopo(ReadSample(name), NvidiaSmiHints{product});
  INFO(topology.status().ToString());
  REQUIRE(topology.ok());
  return *topology;
}

constexpr Link kSelf{LinkClass::kSelf, 0, false};
constexpr Link kPix{LinkClass::kPix, 0, false};
constexpr Link kPxb{LinkClass::kPxb, 0, false};
constexpr Link kPhb{LinkClass::kPhb, 0, false};
constexpr Link kNode{LinkClass::kNode, 0, false};
constexpr Link kSys{LinkClass::kSys, 0, false};
constexpr Link NvLink(int links, bool via_nvswitch = false) { return Link{LinkClass::kNvLink, links, via_nvswitch}; }

TEST_CASE("nvidia-smi: DGX A100 is NV12 through an NVSwitch with mlx5 NICs", "[nvidia_smi]") {
  const Topology topology = ParseSample("dgx-a100.txt", "NVIDIA-A100-SXM4-80GB");
  REQUIRE(topology.gpu_count() == 8);
  CHECK(topology.source() == "nvidia-smi");
  CHECK(topology.warnings().empty());
  // 7 peers x NV12 = 84 links, more than the 12 an A100 has: only a switch explains the matrix.
  CHECK(topology.has_nvswitch());
  CHECK(topology.link(GpuId{0}, GpuId{3}) == NvLink(12, true));
  CHECK(topology.link(GpuId{5}, GpuId{5}) == kSelf);
  CHECK(topology.nvlink_generation() == 3);
  CHECK(topology.pcie_generation() == 4);
  CHECK(topology.gpu(GpuId{7}).memory_mib == 80 * 1024);
  CHECK(topology.gpu(GpuId{7}).product == "NVIDIA-A100-SXM4-80GB");
  CHECK(topology.gpu(GpuId{0}).numa_node == 3);
  CHECK(topology.gpu(GpuId{4}).numa_node == 7);

  REQUIRE(topology.nics().size() == 10);
  CHECK(topology.nics()[0].name == "mlx5_0");
  CHECK(topology.nics()[9].name == "mlx5_9");
  CHECK(topology.nic_link(NicId{0}, GpuId{1}) == kPxb);
  CHECK(topology.nic_link(NicId{0}, GpuId{2}) == kSys);
  // NIC0 is PXB to GPU0/1, on NUMA 3; the storage NIC4 is SYS to every GPU, so its node is unknown.
  CHECK(topology.nics()[0].numa_node == 3);
  CHECK(topology.nics()[8].numa_node == 5);
  CHECK(topology.nics()[4].numa_node == -1);
}

TEST_CASE("nvidia-smi: HGX H100 (p5.48xlarge) is NV18 through an NVSwitch with 32 EFA NICs", "[nvidia_smi]") {
  const Topology topology = ParseSample("hgx-h100-p5.txt", "NVIDIA-H100-80GB-HBM3");
  REQUIRE(topology.gpu_count() == 8);
  CHECK(topology.has_nvswitch());
  CHECK(topology.link(GpuId{2}, GpuId{6}) == NvLink(18, true));
  CHECK(topology.nvlink_generation() == 4);
  CHECK(topology.pcie_generation() == 5);
  CHECK(topology.gpu(GpuId{3}).numa_node == 0);
  CHECK(topology.gpu(GpuId{4}).numa_node == 1);
  REQUIRE(topology.nics().size() == 32);
  CHECK(topology.nics()[0].name == "rdmap79s0");
  CHECK(topology.nics()[31].name == "rdmap138s0");
  CHECK(topology.nics()[31].numa_node == 1);
  CHECK(topology.nic_link(NicId{31}, GpuId{7}) == kPxb);
  CHECK(topology.nic_link(NicId{31}, GpuId{4}) == kNode);
  CHECK(topology.nic_link(NicId{31}, GpuId{0}) == kSys);
}

TEST_CASE("nvidia-smi: DGX-1 V100 hybrid cube-mesh is direct NVLink, not a switch", "[nvidia_smi]") {
  const Topology topology = ParseSample("dgx1-v100.txt", "Tesla-V100-SXM2-16GB");
  REQUIRE(topology.gpu_count() == 8);
  CHECK_FALSE(topology.has_nvswitch());
  CHECK(topology.link(GpuId{0}, GpuId{1}) == NvLink(1));
  CHECK(topology.link(GpuId{0}, GpuId{3}) == NvLink(2));
  CHECK(topology.link(GpuId{0}, GpuId{5}) == kSys);
  CHECK(topology.link(GpuId{7}, GpuId{3}) == NvLink(1));
  CHECK(topology.NvLinkIslands() == std::vector<GpuSet>{GpuSet::FirstN(8)});
  // The old driver prints no NUMA Affinity column and names the NIC columns by device, in its own order.
  CHECK(topology.gpu(GpuId{0}).numa_node == -1);
  REQUIRE(topology.nics().size() == 4);
  CHECK(topology.nics()[1].name == "mlx5_2");
  CHECK(topology.nics()[2].name == "mlx5_1");
  CHECK(topology.nics()[1].numa_node == -1);
  CHECK(topology.nic_link(NicId{1}, GpuId{2}) == kPix);
  CHECK(topology.nic_link(NicId{1}, GpuId{0}) == kPhb);
}

TEST_CASE("nvidia-smi: g5.48xlarge is PCIe only across two NUMA nodes", "[nvidia_smi]") {
  const Topology topology = ParseSample("g5-48xlarge.txt", "NVIDIA-A10G");
  REQUIRE(topology.gpu_count() == 8);
  CHECK_FALSE(topology.has_nvswitch());
  CHECK(topology.link(GpuId{0}, GpuId{1}) == kPhb);
  CHECK(topology.link(GpuId{0}, GpuId{3}) == kNode);
  CHECK(topology.link(GpuId{3}, GpuId{4}) == kSys);
  CHECK(topology.gpu(GpuId{5}).numa_node == 1);
  CHECK(topology.nics().empty());
  CHECK(topology.nvlink_generation() == 0);
  CHECK(topology.pcie_generation() == 4);
  CHECK(topology.NvLinkIslands().size() == 8);
}

TEST_CASE("nvidia-smi: 4x RTX 8000 has NV2 bridges on 0-3 and 1-2", "[nvidia_smi]") {
  const Topology topology = ParseSample("rtx8000-x4.txt", "Quadro RTX 8000");
  REQUIRE(topology.gpu_count() == 4);
  CHECK_FALSE(topology.has_nvswitch());
  CHECK(topology.link(GpuId{0}, GpuId{3}) == NvLink(2));
  CHECK(topology.link(GpuId{1}, GpuId{2}) == NvLink(2));
  CHECK(topology.link(GpuId{0}, GpuId{1}) == kNode);
  CHECK(topology.link(GpuId{0}, GpuId{2}) == kSys);
  CHECK(topology.NvLinkIslands() == std::vector<GpuSet>{GpuSet::FromMask(0b1001), GpuSet::FromMask(0b0110)});
}

TEST_CASE("nvidia-smi: two bridged A100 PCIe cards, tab separated", "[nvidia_smi]") {
  const Topology topology = ParseSample("a100-pcie-x2-tabs.txt", "NVIDIA A100-PCIE-40GB");
  REQUIRE(topology.gpu_count() == 2);
  // Two GPUs cannot tell a switch from a bridge; a bridge is the only thing on PCIe cards.
  CHECK(topology.link(GpuId{0}, GpuId{1}) == NvLink(12));
  REQUIRE(topology.nics().size() == 1);
  CHECK(topology.nics()[0].name == "mlx5_0");
  CHECK(topology.nic_link(NicId{0}, GpuId{1}) == kSys);
  CHECK(topology.gpu(GpuId{1}).memory_mib == 40 * 1024);
}

TEST_CASE("nvidia-smi: odd whitespace, CRLF, no NIC legend, unknown product", "[nvidia_smi]") {
  const Topology topology = ParseSample("t4-x4-odd-whitespace-crlf.txt", "");
  REQUIRE(topology.gpu_count() == 4);
  CHECK(topology.link(GpuId{0}, GpuId{1}) == kPhb);
  CHECK(topology.link(GpuId{1}, GpuId{3}) == kNode);
  CHECK(topology.gpu(GpuId{3}).numa_node == 0);
  REQUIRE(topology.nics().size() == 1);
  CHECK(topology.nics()[0].name.empty());
  CHECK(topology.nics()[0].numa_node == 0);  // PHB to GPU0, which is on NUMA 0
  CHECK(topology.nvlink_generation() == 0);
  CHECK(topology.pcie_generation() == 3);
  REQUIRE(topology.warnings().size() == 1);
  CHECK_THAT(topology.warnings()[0], Catch::Contains("GPU product not given"));
}

TEST_CASE("nvidia-smi: an unknown product keeps the matrix and warns", "[nvidia_smi]") {
  const Topology topology = ParseSample("dgx-a100.txt", "ACME-Z9000");
  CHECK(topology.nvlink_generation() == 0);
  CHECK(topology.pcie_generation() == 3);
  // Unknown links per GPU: the most any product has (18) is assumed, and 7 x 12 is still more.
  CHECK(topology.has_nvswitch());
  REQUIRE(topology.warnings().size() == 1);
  CHECK_THAT(topology.warnings()[0], Catch::Contains("unknown GPU product \"ACME-Z9000\""));
}

TEST_CASE("nvidia-smi: a single GPU", "[nvidia_smi]") {
  absl::StatusOr<Topology> topology = ParseNvidiaSmiTopo("\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-7\t0\n");
  REQUIRE(topology.ok());
  CHECK(topology->gpu_count() == 1);
  CHECK(topology->gpu(GpuId{0}).numa_node == 0);
}

// A 3-GPU, 1-NIC table with cells every 6 columns: the label at column 1, then cells at 9, 15, 21, 27 and the
// affinities at 33 and 39. Rejection cases below replace one line of it.
constexpr const char* kHeader = "        GPU0  GPU1  GPU2  NIC0  CPU Affinity  NUMA Affinity";
constexpr const char* kGpu0 = "GPU0    X     NV1   SYS   PIX   0-7   0";
constexpr const char* kGpu1 = "GPU1    NV1   X     SYS   PIX   0-7   0";
constexpr const char* kGpu2 = "GPU2    SYS   SYS   X     SYS   8-15  1";
constexpr const char* kNic0 = "NIC0    PIX   PIX   SYS   X";

std::string Lines(const std::vector<std::string>& lines) { return absl::StrJoin(lines, "\n") + "\n"; }

// "GPU0 GPU1 ... GPU<last>" from column 1: GPU0..GPU9 take 5 columns each, GPU10.. 6.
std::string GpuHeader(int last) {
  std::vector<std::string> cells;
  for (int i = 0; i <= last; ++i) cells.push_back(absl::StrCat("GPU", i));
  return absl::StrJoin(cells, " ");
}

TEST_CASE("nvidia-smi: the base table of the rejection cases parses", "[nvidia_smi]") {
  absl::StatusOr<Topology> topology = ParseNvidiaSmiTopo(Lines({kHeader, kGpu0, kGpu1, kGpu2, kNic0}));
  INFO(topology.status().ToString());
  REQUIRE(topology.ok());
  CHECK(topology->link(GpuId{0}, GpuId{1}) == NvLink(1));
  CHECK(topology->nics()[0].numa_node == 0);
}

TEST_CASE("nvidia-smi: malformed tables name the line and column", "[nvidia_smi]") {
  struct Row {
    const char* name;
    std::string text;
    int line;
    int column;
    const char* message;
  };
  const Row rows[] = {
      {"blank input", " \n\t\n", 1, 1, "no header row"},
      {"no header", Lines({kGpu0, kGpu1}), 1, 1, "expected the header row"},
      {"prose before the header", "\n\n  Topology:\n", 3, 3, "expected the header row"},
      {"unknown column", Lines({"        GPU0  GPU1  GPU2  NIC0  CPU Afinity"}), 1, 33, "unknown column \"CPU\""},
      {"GPU columns out of order", Lines({"        GPU0  GPU2"}), 1, 15, "expected column GPU1"},
      // GPU16 starts after GPU0..GPU9 (10 x 5 columns) and GPU10..GPU15 (6 x 6): 1 + 50 + 36 = 87.
      {"more than 16 GPUs", Lines({GpuHeader(16)}), 1, 87, "more than 16 GPUs"},
      {"unknown token", Lines({kHeader, kGpu0, "GPU1    NV1   X     NVX   PIX   0-7   0"}), 3, 21,
       "unknown link \"NVX\""},
      {"NV0", Lines({kHeader, "GPU0    X     NV0   SYS   PIX   0-7   0"}), 2, 15, "unknown link \"NV0\""},
      {"X off the diagonal", Lines({kHeader, "GPU0    X     X     SYS   PIX   0-7   0"}), 2, 15,
       "only allowed on the diagonal"},
      {"diagonal not X", Lines({kHeader, kGpu0, "GPU1    NV1   NV1   SYS   PIX   0-7   0"}), 3, 15,
       "expected X (self) on the diagonal"},
      // "8-15" starts at 33 and is 4 long: the missing NUMA cell would start at 37.
      {"row with too few cells", Lines({kHeader, kGpu0, kGpu1, "GPU2    SYS   SYS   X     SYS   8-15"}), 4, 37,
       "row GPU2 has 5 values, expected 6"},
      {"row with too many cells", Lines({kHeader, "GPU0    X     NV1   SYS   PIX   0-7   0     7"}), 2, 45,
       "row GPU0 has 7 values, expected 6"},
      {"GPU rows out of order", Lines({kHeader, kGpu0, kGpu2, kGpu1}), 3, 1, "expected row GPU1, found \"GPU2\""},
      {"GPU row missing before the NIC rows", Lines({kHeader, kGpu0, kGpu1, kNic0}), 4, 1,
       "expected row GPU2, found \"NIC0\""},
      {"GPU row missing at the end", Lines({kHeader, kGpu0, kGpu1}), 4, 1, "missing row GPU2"},
      {"NIC row missing before the legend", Lines({kHeader, kGpu0, kGpu1, kGpu2, "", "Legend:"}), 6, 1,
       "missing row NIC0"},
      {"row after the last", Lines({kHeader, kGpu0, kGpu1, kGpu2, kNic0, "GPU3    SYS"}), 6, 1, "unexpected row"},
      {"asymmetric GPU pair", Lines({kHeader, kGpu0, "GPU1    NV2   X     SYS   PIX   0-7   0"}), 3, 9,
       "GPU1-GPU0 is NV2 but GPU0-GPU1 (line 2, column 15) is NV1"},
      {"asymmetric NIC pair", Lines({kHeader, kGpu0, kGpu1, kGpu2, "NIC0    PIX   PIX   PIX   X"}), 5, 21,
       "NIC0-GPU2 is PIX but GPU2-NIC0 (line 4, column 27) is SYS"},
      {"bad CPU affinity", Lines({kHeader, "GPU0    X     NV1   SYS   PIX   0-x   0"}), 2, 33, "\"0-x\" is not N/A"},
      {"bad NUMA affinity", Lines({kHeader, kGpu0, kGpu1, "GPU2    SYS   SYS   X     SYS   8-15  one"}), 4, 39,
       "\"one\" is not N/A"},
      {"NIC legend for a NIC the matrix lacks",
       Lines({kHeader, kGpu0, kGpu1, kGpu2, kNic0, "", "NIC Legend:", "", "  NIC3: mlx5_3"}), 9, 3,
       "names NIC3 but the matrix has 1 NICs"},
      {"NIC legend without a name", Lines({kHeader, kGpu0, kGpu1, kGpu2, kNic0, "NIC Legend:", "  NIC0:"}), 7, 8,
       "expected one NIC name"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const absl::StatusOr<Topology> topology = ParseNvidiaSmiTopo(row.text);
      CHECK_STATUS(topology, absl::StatusCode::kInvalidArgument,
                   absl::StrCat("line ", row.line, ", column ", row.column, ":"));
      CHECK_STATUS(topology, absl::StatusCode::kInvalidArgument, row.message);
    }
  }
}

}  // namespace
}  // namespace topofit::topology
