#include "agent/gpu_discovery.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <map>

#include "codec/topology_json.h"
#include "tests/kube/status_matchers.h"

namespace topofit::agent {
namespace {

std::string ReadData(const std::string& name) {
  std::ifstream file(std::string(TOPOFIT_TEST_DATA_DIR) + "/nvidia-smi/" + name, std::ios::binary);
  REQUIRE(file.good());
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// A CommandRunner that answers each command line from a table.
class ScriptedRunner final : public CommandRunner {
 public:
  std::map<std::string, absl::StatusOr<std::string>> replies;
  absl::StatusOr<std::string> Run(const std::vector<std::string>& argv) override {
    std::string line = argv[0];
    for (size_t i = 1; i < argv.size(); ++i) line += " " + argv[i];
    const auto it = replies.find(line);
    return it == replies.end() ? absl::NotFoundError("cannot run " + line) : it->second;
  }
};

constexpr char kQuery[] = "nvidia-smi --query-gpu=index,uuid,name,pci.bus_id,memory.total --format=csv,noheader";

TEST_CASE("ParseGpuQuery reads nvidia-smi's CSV rows", "[agent][discovery]") {
  absl::StatusOr<std::vector<QueriedGpu>> gpus = ParseGpuQuery(ReadData("dgx-a100-query.csv"));
  REQUIRE_OK(gpus);
  REQUIRE(gpus->size() == 8);
  CHECK((*gpus)[3].index == 3);
  CHECK((*gpus)[3].uuid == "GPU-0a000000-0000-4000-8000-000000000003");
  CHECK((*gpus)[3].name == "NVIDIA A100-SXM4-80GB");
  CHECK((*gpus)[3].pci_bus_id == "00000000:4E:00.0");
  CHECK((*gpus)[3].memory_mib == 81920);
  CHECK_FALSE((*gpus)[3].error);

  SECTION("rows out of order, CRLF line ends, an errored GPU") {
    absl::StatusOr<std::vector<QueriedGpu>> mixed = ParseGpuQuery(
        "1, GPU-b, NVIDIA A10G, [GPU requires reset], [N/A]\r\n0, GPU-a, NVIDIA A10G, 00000000:00:1B.0, 23028 MiB\r\n");
    REQUIRE_OK(mixed);
    CHECK((*mixed)[0].uuid == "GPU-a");
    CHECK_FALSE((*mixed)[0].error);
    CHECK((*mixed)[1].uuid == "GPU-b");
    CHECK((*mixed)[1].error);
    CHECK((*mixed)[1].memory_mib == 0);
  }
}

TEST_CASE("ParseGpuQuery refuses garbled output with the line at fault", "[agent][discovery]") {
  struct Case {
    const char* name;
    const char* csv;
    const char* message;
  };
  const Case cases[] = {
      {"empty", "", "no GPUs listed"},
      {"a header", "index, uuid, name, pci.bus_id, memory.total [MiB]\n", "line 1: index \"index\""},
      {"four fields", "0, GPU-a, NVIDIA A10G, 00000000:00:1B.0\n", "line 1: expected 5 fields, found 4"},
      {"not a uuid", "0, 5a17, NVIDIA A10G, 0:1B.0, 1 MiB\n", "uuid \"5a17\""},
      {"a repeated index", "0, GPU-a, A, b, 1 MiB\n0, GPU-b, A, b, 1 MiB\n", "line 2: index 0 repeats"},
      {"memory not in MiB form", "0, GPU-a, A, b, lots MiB\n", "memory \"lots MiB\""},
  };
  for (const Case& c : cases) {
    SECTION(c.name) { CHECK_STATUS(ParseGpuQuery(c.csv), absl::StatusCode::kInvalidArgument, c.message); }
  }
}

TEST_CASE("BuildNodeGpus joins the query and topo -m into the published descriptor", "[agent][discovery]") {
  absl::StatusOr<NodeGpus> node = BuildNodeGpus(ReadData("dgx-a100-query.csv"), ReadData("dgx-a100.txt"));
  REQUIRE_OK(node);
  CHECK(node->topology.gpu_count() == 8);
  CHECK(node->topology.gpu(topology::GpuId{5}).uuid == "GPU-0a000000-0000-4000-8000-000000000005");
  CHECK(node->topology.gpu(topology::GpuId{5}).pci_bus_id == "00000000:90:00.0");
  CHECK(node->topology.gpu(topology::GpuId{5}).numa_node == 7);  // dgx-a100.txt's NUMA Affinity column
  CHECK(node->topology.gpu(topology::GpuId{0}).memory_mib == 81920);
  CHECK(node->topology.has_nvswitch());

  // What the agent publishes reads back as the same topology, UUIDs and NUMA nodes included.
  const std::string annotation = codec::TopologyToJson(node->topology).dump();
  absl::StatusOr<topology::Topology> back = codec::ParseTopologyAnnotation(annotation, {});
  REQUIRE_OK(back);
  CHECK(codec::TopologyToJson(*back) == codec::TopologyToJson(node->topology));
  const nlohmann::json published = nlohmann::json::parse(annotation);
  CHECK(published["gpus"][2]["uuid"] == "GPU-0a000000-0000-4000-8000-000000000002");
  CHECK(published["gpus"][2]["numaNode"] == 1);

  SECTION("a gap in the indices") {
    CHECK_STATUS(BuildNodeGpus("0, GPU-a, A, b, 1 MiB\n2, GPU-b, A, b, 1 MiB\n", ReadData("dgx-a100.txt")),
                 absl::StatusCode::kInvalidArgument, "indices are not 0..1 (largest 2)");
  }
  SECTION("disagreeing GPU counts") {
    CHECK_STATUS(BuildNodeGpus("0, GPU-a, NVIDIA A100-SXM4-80GB, 0:7:0.0, 81920 MiB\n", ReadData("dgx-a100.txt")),
                 absl::StatusCode::kInvalidArgument, "nvidia-smi lists 1 GPUs but topo -m shows 8");
  }
  SECTION("garbled topo -m") {
    CHECK_STATUS(BuildNodeGpus(ReadData("dgx-a100-query.csv"), "GPU0 GPU1\nGPU0 X NV99x\n"),
                 absl::StatusCode::kInvalidArgument, "nvidia-smi topo -m");
  }
}

TEST_CASE("GpuDiscovery runs nvidia-smi and names the command that failed", "[agent][discovery]") {
  ScriptedRunner runner;
  GpuDiscovery discovery(runner, "nvidia-smi");
  SECTION("missing nvidia-smi") {
    CHECK_STATUS(discovery.Discover(), absl::StatusCode::kNotFound, "nvidia-smi --query-gpu: cannot run");
  }
  SECTION("the query works, topo -m fails") {
    runner.replies[kQuery] = ReadData("dgx-a100-query.csv");
    runner.replies["nvidia-smi topo -m"] = absl::UnavailableError("exited with status 9");
    CHECK_STATUS(discovery.Discover(), absl::StatusCode::kUnavailable, "nvidia-smi topo -m: exited with status 9");
  }
  SECTION("both work") {
    runner.replies[kQuery] = ReadData("dgx-a100-query.csv");
    runner.replies["nvidia-smi topo -m"] = ReadData("dgx-a100.txt");
    REQUIRE_OK(discovery.Discover());
    REQUIRE_OK(discovery.Query());
  }
}

TEST_CASE("HealthAfterCheck: a GPU that disappears or errors is unhealthy", "[agent][discovery]") {
  const std::vector<QueriedGpu> known = *ParseGpuQuery("0, GPU-a, A, b, 1 MiB\n1, GPU-b, A, b, 1 MiB\n2, GPU-c, A, b, 1 MiB\n");
  CHECK(HealthAfterCheck(known, known) == std::vector<bool>{true, true, true});
  // GPU-b fell off the bus; GPU-c reports an error; GPU-a is now index 0 of two.
  CHECK(HealthAfterCheck(known, ParseGpuQuery("0, GPU-a, A, b, 1 MiB\n1, GPU-c, A, ERR!, 1 MiB\n")) ==
        std::vector<bool>{true, false, false});
  CHECK(HealthAfterCheck(known, absl::UnavailableError("nvidia-smi exited with status 15")) ==
        std::vector<bool>{false, false, false});
}

TEST_CASE("ProcessRunner runs a program and reports how it failed", "[agent][discovery]") {
  ProcessRunner runner(absl::Seconds(5));
  absl::StatusOr<std::string> echoed = runner.Run({"/bin/sh", "-c", "printf 'a\\nb'"});
  REQUIRE_OK(echoed);
  CHECK(*echoed == "a\nb");
  CHECK_STATUS(runner.Run({"/nonexistent/nvidia-smi"}), absl::StatusCode::kNotFound,
               "cannot run /nonexistent/nvidia-smi");
  CHECK_STATUS(runner.Run({"/bin/sh", "-c", "echo 'NVIDIA-SMI has failed' >&2; exit 9"}),
               absl::StatusCode::kUnavailable, "exited with status 9: NVIDIA-SMI has failed");
  ProcessRunner impatient(absl::Milliseconds(100));
  CHECK_STATUS(impatient.Run({"/bin/sh", "-c", "sleep 5"}), absl::StatusCode::kDeadlineExceeded, "killed");
}

}  // namespace
}  // namespace topofit::agent
