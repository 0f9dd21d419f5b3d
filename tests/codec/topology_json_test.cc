#include "codec/topology_json.h"

#include <catch2/catch.hpp>

#include "tests/codec/hostile_json.h"
#include "tests/kube/status_matchers.h"
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace topofit::codec {
namespace {

using topology::GpuId;
using topology::Link;
using topology::LinkClass;
using topology::NicId;
using topology::Topology;

std::string ReadSample(const std::string& name) {
  std::ifstream file(std::string(TOPOFIT_TEST_DATA_DIR) + "/nvidia-smi/" + name, std::ios::binary);
  REQUIRE(file.good());
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

Topology RequireTopology(const absl::StatusOr<Topology>& topology) {
  INFO(topology.status().ToString());
  REQUIRE(topology.ok());
  return *topology;
}

// Everything the descriptor carries, compared field by field (Topology has no operator==: it also holds
// derived tables).
void CheckSameTopology(const Topology& a, const Topology& b) {
  REQUIRE(a.gpu_count() == b.gpu_count());
  for (int i = 0; i < a.gpu_count(); ++i) {
    const GpuId gpu{i};
    CHECK(a.gpu(gpu).uuid == b.gpu(gpu).uuid);
    CHECK(a.gpu(gpu).product == b.gpu(gpu).product);
    CHECK(a.gpu(gpu).memory_mib == b.gpu(gpu).memory_mib);
    CHECK(a.gpu(gpu).numa_node == b.gpu(gpu).numa_node);
    CHECK(a.gpu(gpu).pci_bus_id == b.gpu(gpu).pci_bus_id);
    for (int j = 0; j < a.gpu_count(); ++j) CHECK(a.link(gpu, GpuId{j}) == b.link(gpu, GpuId{j}));
  }
  REQUIRE(a.nics().size() == b.nics().size());
  for (size_t n = 0; n < a.nics().size(); ++n) {
    const NicId nic{static_cast<int>(n)};
    CHECK(a.nics()[n].name == b.nics()[n].name);
    CHECK(a.nics()[n].numa_node == b.nics()[n].numa_node);
    for (int j = 0; j < a.gpu_count(); ++j) CHECK(a.nic_link(nic, GpuId{j}) == b.nic_link(nic, GpuId{j}));
  }
  CHECK(a.nvlink_generation() == b.nvlink_generation());
  CHECK(a.pcie_generation() == b.pcie_generation());
  CHECK(a.domain() == b.domain());
}

// Four GB200 GPUs of one NVL72 compute tray: every field of the schema set once.
constexpr const char* kGb200Tray = R"({
  "gpus": [
    {"index": 0, "uuid": "GPU-0a", "product": "NVIDIA-GB200", "memoryMiB": 189471, "numaNode": 0,
     "pciBusId": "00000008:01:00.0"},
    {"index": 1, "uuid": "GPU-1b", "product": "NVIDIA-GB200", "memoryMiB": 189471, "numaNode": 0},
    {"index": 2, "uuid": "GPU-2c", "product": "NVIDIA-GB200", "memoryMiB": 189471, "numaNode": 1},
    {"index": 3, "uuid": "GPU-3d", "product": "NVIDIA-GB200", "memoryMiB": 189471, "numaNode": 1}
  ],
  "nvlinkGeneration": 5,
  "pcieGeneration": 5,
  "defaultLink": "NV18",
  "links": [{"gpus": [0, 1], "link": "NV18", "nvswitch": true}],
  "nics": [{"name": "mlx5_0", "numaNode": 0, "links": ["PIX", "PHB", "SYS", "SYS"]}],
  "clique": "4cb1b2a0-6d3c-4c4c-9a4e-2e4f0c7d1a11.1"
})";

TEST_CASE("topology JSON: a descriptor survives Topology -> JSON -> Topology", "[topology_json]") {
  const Topology parsed = RequireTopology(ParseTopologyDescriptor(kGb200Tray));
  CHECK(parsed.source() == "json");
  CHECK(parsed.gpu(GpuId{0}).pci_bus_id == "00000008:01:00.0");
  CHECK(parsed.link(GpuId{0}, GpuId{1}) == Link{LinkClass::kNvLink, 18, true});
  // "nvswitch" is stated on one entry, so nothing is inferred for the pairs that took the default.
  CHECK(parsed.link(GpuId{2}, GpuId{3}) == Link{LinkClass::kNvLink, 18, false});
  CHECK(parsed.nic_link(NicId{0}, GpuId{1}) == Link{LinkClass::kPhb, 0, false});
  REQUIRE(parsed.domain().has_value());
  CHECK(parsed.domain()->value == "4cb1b2a0-6d3c-4c4c-9a4e-2e4f0c7d1a11.1");

  const nlohmann::json json = TopologyToJson(parsed);
  const Topology again = RequireTopology(ParseTopologyDescriptor(json.dump()));
  CheckSameTopology(parsed, again);
  CHECK(TopologyToJson(again) == json);
}

TEST_CASE("topology JSON: nvidia-smi samples survive the descriptor", "[topology_json]") {
  for (const char* sample : {"dgx-a100.txt", "dgx1-v100.txt", "t4-x4-odd-whitespace-crlf.txt"}) {
    SECTION(sample) {
      const Topology from_smi = RequireTopology(
          topology::ParseNvidiaSmiTopo(ReadSample(sample), topology::NvidiaSmiHints{"NVIDIA-A100-SXM4-80GB"}));
      const Topology from_json = RequireTopology(ParseTopologyDescriptor(TopologyToJson(from_smi).dump()));
      CheckSameTopology(from_smi, from_json);
      CHECK(from_json.has_nvswitch() == from_smi.has_nvswitch());
    }
  }
}

TEST_CASE("topology JSON: any NUMA id nvidia-smi gives survives the descriptor", "[topology_json][hostile]") {
  // A NUMA Affinity of 4096 or more was parsed from nvidia-smi, then refused by the descriptor the agent
  // publishes it as (issue 15).
  const std::string text =
      "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
      "GPU0\t X \tNV12\tPIX\t0-31\t4096\tN/A\n"
      "GPU1\tNV12\t X \tSYS\t0-31\t999999\tN/A\n"
      "NIC0\tPIX\tSYS\t X \t\t\t\n";
  const Topology from_smi =
      RequireTopology(topology::ParseNvidiaSmiTopo(text, topology::NvidiaSmiHints{"NVIDIA-A100-PCIE-40GB"}));
  REQUIRE(from_smi.gpu(GpuId{0}).numa_node == 4096);
  REQUIRE(from_smi.gpu(GpuId{1}).numa_node == 999'999);
  REQUIRE(from_smi.nics()[0].numa_node == 4096);
  const Topology from_json = RequireTopology(ParseTopologyDescriptor(TopologyToJson(from_smi).dump()));
  CheckSameTopology(from_smi, from_json);
  CHECK_STATUS(ParseTopologyDescriptor(R"({"gpus": [{"numaNode": 1048576}]})"), absl::StatusCode::kInvalidArgument,
               "numaNode");
}

// The examples in docs/topology-descriptor.md are read as they are written, so the document cannot drift.
TEST_CASE("topology JSON: the documented examples parse", "[topology_json]") {
  std::ifstream file(std::string(TOPOFIT_TEST_DATA_DIR) + "/../../docs/topology-descriptor.md");
  REQUIRE(file.good());
  std::stringstream contents;
  contents << file.rdbuf();
  const std::string doc = contents.str();
  int examples = 0;
  for (size_t start = doc.find("```json\n"); start != std::string::npos; start = doc.find("```json\n", start)) {
    start += 8;
    const size_t end = doc.find("```", start);
    REQUIRE(end != std::string::npos);
    const Topology topology = RequireTopology(ParseTopologyDescriptor(doc.substr(start, end - start)));
    CHECK(topology.warnings().empty());
    ++examples;
  }
  CHECK(examples == 2);
}

TEST_CASE("topology JSON: omitted fields take documented defaults", "[topology_json]") {
  SECTION("unlisted pairs are SYS; generations and memory come from the product") {
    const Topology topology = RequireTopology(ParseTopologyDescriptor(R"({
      "gpus": [{"product": "NVIDIA-L4"}, {"product": "NVIDIA-L4"}, {"product": "NVIDIA-L4"}],
      "links": [{"gpus": [2, 0], "link": "PHB"}]
    })"));
    CHECK(topology.link(GpuId{0}, GpuId{1}) == Link{LinkClass::kSys, 0, false});
    CHECK(topology.link(GpuId{0}, GpuId{2}) == Link{LinkClass::kPhb, 0, false});
    CHECK(topology.nvlink_generation() == 0);
    CHECK(topology.pcie_generation() == 4);
    CHECK(topology.gpu(GpuId{1}).memory_mib == 24 * 1024);
    CHECK(topology.gpu(GpuId{1}).numa_node == -1);
    CHECK(topology.warnings().empty());
  }
  SECTION("an NVLink default with no nvswitch stated is inferred like nvidia-smi") {
    // 7 peers x NV18 = 126 links, an H100 has 18: only a switch explains it.
    std::string gpus;
    for (int i = 0; i < 8; ++i) gpus += absl::StrCat(i ? "," : "", R"({"product": "NVIDIA-H100-80GB-HBM3"})");
    const Topology topology =
        RequireTopology(ParseTopologyDescriptor(absl::StrCat(R"({"gpus": [)", gpus, R"(], "defaultLink": "NV18"})")));
    CHECK(topology.has_nvswitch());
    CHECK(topology.link(GpuId{0}, GpuId{7}) == Link{LinkClass::kNvLink, 18, true});
    CHECK(topology.nvlink_generation() == 4);
    CHECK(topology.pcie_generation() == 5);
    CHECK(topology.gpu(GpuId{7}).memory_mib == 80 * 1024);
  }
  SECTION("an unknown product without generations warns") {
    const Topology topology = RequireTopology(ParseTopologyDescriptor(R"({"gpus": [{"product": "ACME-Z9000"}]})"));
    CHECK(topology.nvlink_generation() == 0);
    CHECK(topology.pcie_generation() == 3);
    REQUIRE(topology.warnings().size() == 1);
    CHECK_THAT(topology.warnings()[0], Catch::Contains("unknown GPU product \"ACME-Z9000\""));
  }
}

TEST_CASE("topology JSON: the annotation is a descriptor when it starts with '{'", "[topology_json]") {
  const topology::NvidiaSmiHints hints{"NVIDIA-A100-SXM4-80GB"};
  SECTION("JSON after leading whitespace; GPUs without a product take the hint's") {
    const Topology topology =
        RequireTopology(ParseTopologyAnnotation(" \n\t{\"gpus\": [{}, {\"product\": \"NVIDIA-L4\"}]}", hints));
    CHECK(topology.source() == "json");
    CHECK(topology.gpu(GpuId{0}).product == "NVIDIA-A100-SXM4-80GB");
    CHECK(topology.gpu(GpuId{1}).product == "NVIDIA-L4");
    CHECK(topology.nvlink_generation() == 3);  // GPU 0's product
  }
  SECTION("anything else is nvidia-smi text") {
    const Topology topology = RequireTopology(ParseTopologyAnnotation(ReadSample("rtx8000-x4.txt"), hints));
    CHECK(topology.source() == "nvidia-smi");
    CHECK(topology.gpu_count() == 4);
    CHECK(topology.gpu(GpuId{0}).product == "NVIDIA-A100-SXM4-80GB");
  }
  SECTION("errors keep the format's own locations") {
    absl::StatusOr<Topology> smi = ParseTopologyAnnotation("\tGPU0\tGPU1\nGPU0\t X \tNV0\n", hints);
    REQUIRE_FALSE(smi.ok());
    // "GPU0\t X \t" is 9 characters: NV0 starts at column 10.
    CHECK_THAT(std::string(smi.status().message()), Catch::Contains("line 2, column 10"));
    absl::StatusOr<Topology> json = ParseTopologyAnnotation("  {\"gpus\": 3}", hints);
    REQUIRE_FALSE(json.ok());
    CHECK_THAT(std::string(json.status().message()), Catch::Contains("gpus: expected an array"));
  }
}

TEST_CASE("topology JSON: malformed descriptors name the JSON path", "[topology_json]") {
  // Four GPUs, so that gpu indices run 0..3.
  const std::string four = R"("gpus": [{}, {}, {}, {}])";
  struct Row {
    const char* name;
    std::string json;
    const char* message;  // "<path>: <what>"
  };
  const Row rows[] = {
      {"not JSON", "{\"gpus\": [", "not valid JSON"},
      {"not an object", "[]", "topology descriptor: expected an object, found array"},
      {"missing gpus", "{}", "gpus: required"},
      {"empty gpus", R"({"gpus": []})", "gpus: expected an array of 1 to 16 GPUs"},
      {"17 gpus", R"({"gpus": [{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}]})",
       "gpus: expected an array of 1 to 16 GPUs"},
      {"gpu not an object", R"({"gpus": [1]})", "gpus[0]: expected an object, found number"},
      {"memory of the wrong type", R"({"gpus": [{}, {"memoryMiB": "lots"}]})",
       "gpus[1].memoryMiB: expected an integer, found string"},
      {"fractional index", R"({"gpus": [{"index": 0.5}]})", "gpus[0].index: expected an integer, found number"},
      {"index out of order", R"({"gpus": [{"index": 0}, {"index": 2}, {}]})",
       "gpus[1].index: GPUs are listed in index order: expected 1, found 2"},
      {"index beyond uint64", R"({"gpus": [{"index": 18446744073709551615}]})",
       "gpus[0].index: must be 0 to 15, found 18446744073709551615"},
      {"unknown top-level field", "{" + four + R"(, "nvlinkGen": 4})", "nvlinkGen: unknown field"},
      {"unknown gpu field", R"({"gpus": [{"uuid": "GPU-1", "numa": 0}]})", "gpus[0].numa: unknown field"},
      {"generation out of range", "{" + four + R"(, "nvlinkGeneration": 7})",
       "nvlinkGeneration: must be 0 to 5, found 7"},
      {"self as default link", "{" + four + R"(, "defaultLink": "X"})", "defaultLink: X (self) is not a link"},
      {"links not an array", "{" + four + R"(, "links": {}})", "links: expected an array"},
      {"GPU index beyond the node", "{" + four + R"(, "links": [{"gpus": [0, 1], "link": "PIX"},
          {"gpus": [2, 9], "link": "PIX"}]})",
       "links[1].gpus[1]: must be 0 to 3, found 9"},
      {"pair of one GPU", "{" + four + R"(, "links": [{"gpus": [2, 2], "link": "PIX"}]})",
       "links[0].gpus[1]: a GPU is not linked to itself"},
      {"pair of three GPUs", "{" + four + R"(, "links": [{"gpus": [0, 1, 2], "link": "PIX"}]})",
       "links[0].gpus: required: the two GPU indices"},
      {"unknown link token", "{" + four + R"(, "links": [{"gpus": [0, 1], "link": "NV0"}]})",
       "links[0].link: unknown link \"NV0\""},
      {"missing link", "{" + four + R"(, "links": [{"gpus": [0, 1]}]})", "links[0].link: required"},
      {"duplicate pair, reversed", "{" + four + R"(, "links": [{"gpus": [0, 1], "link": "NV2"},
          {"gpus": [1, 3], "link": "PIX"}, {"gpus": [1, 0], "link": "NV2"}]})",
       "links[2].gpus: GPUs 1 and 0 are already linked by links[0]"},
      {"NVSwitch on PCIe", "{" + four + R"(, "links": [{"gpus": [0, 1], "link": "PIX", "nvswitch": true}]})",
       "links[0].nvswitch: only NVLink (NV#) links go through an NVSwitch"},
      {"nvswitch not a boolean", "{" + four + R"(, "links": [{"gpus": [0, 1], "link": "NV4", "nvswitch": "yes"}]})",
       "links[0].nvswitch: expected true or false"},
      {"NIC with too few links", "{" + four + R"(, "nics": [{"name": "mlx5_0", "links": ["PIX"]}]})",
       "nics[0].links: required: one link token per GPU (4)"},
      {"NIC linked to itself", "{" + four + R"(, "nics": [{"links": ["PIX", "PIX", "X", "SYS"]}]})",
       "nics[0].links[2]: X (self) is not a link"},
      {"NIC name of the wrong type", "{" + four + R"(, "nics": [{"name": 5, "links": ["PIX", "PIX", "SYS", "SYS"]}]})",
       "nics[0].name: expected a string, found number"},
      {"empty clique", "{" + four + R"(, "clique": ""})", "clique: must not be empty"},
      // A node annotation: bounded before anything is built from it (codec/json_limits.h).
      {"deeply nested", topofit::testing::NestedArrays(100'000),
       "topology descriptor: JSON nested deeper than 64 levels"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      CHECK_STATUS(ParseTopologyDescriptor(row.json), absl::StatusCode::kInvalidArgument, row.message);
    }
  }
}

}  // namespace
}  // namespace topofit::codec
