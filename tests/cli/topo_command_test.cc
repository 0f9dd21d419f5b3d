#include "cli/topo_command.h"

#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace topofit::cli {
namespace {

struct Run {
  int code;
  std::string out;
  std::string err;
};

Run RunWith(const TopoOptions& options, const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  const int code = RunTopo(options, in, out, err);
  return {code, out.str(), err.str()};
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  REQUIRE(file.good());
  return std::string(std::istreambuf_iterator<char>(file), {});
}

TopoOptions Shape(const std::string& shape, int gpus) {
  TopoOptions options;
  options.shape = shape;
  options.gpus = gpus;
  options.json = true;
  return options;
}

TEST_CASE("topo chooses and explains a set as JSON", "[cli]") {
  TopoOptions options = Shape("p3.16xlarge", 4);
  options.min_link = "NV";
  const Run run = RunWith(options);
  REQUIRE(run.code == 0);
  const nlohmann::json out = nlohmann::json::parse(run.out);
  CHECK(out["summary"]["source"] == "catalog:dgx1-v100");
  CHECK(out["allocation"]["gpus"] == nlohmann::json({0, 1, 2, 3}));
  // every DGX-1 V100 quad has a single NVLink (25 GB/s) edge on its best ring
  CHECK(out["allocation"]["bandwidthGBps"] == 25.0);
  CHECK(out["allocation"]["weakestLink"] == "NV");
  CHECK(out["allocation"]["leftover"] == nlohmann::json({4, 5, 6, 7}));
}

TEST_CASE("topo reads nvidia-smi text from stdin and prints the matrix", "[cli]") {
  TopoOptions options;
  options.file = "-";
  options.product = "Tesla-V100-SXM2-32GB";
  const Run run = RunWith(options, ReadFile(TOPOFIT_TEST_DATA_DIR "/nvidia-smi/dgx1-v100.txt"));
  REQUIRE(run.code == 0);
  CHECK_THAT(run.out, Catch::Contains("source:         nvidia-smi"));
  CHECK_THAT(run.out, Catch::Contains("GPU0  X      NV1    NV1    NV2    NV2    SYS"));
  CHECK_THAT(run.out, Catch::Contains("best set bandwidth by size: 2:50GB/s"));
}

TEST_CASE("topo reads a JSON descriptor and selects shapes from labels", "[cli]") {
  SECTION("descriptor on stdin") {
    TopoOptions options;
    options.file = "-";
    options.gpus = 2;
    options.json = true;
    const Run run = RunWith(options, R"({"gpus": [{"product": "NVIDIA-A10G"}, {"product": "NVIDIA-A10G"},
        {"product": "NVIDIA-A10G"}], "links": [{"gpus": [1, 2], "link": "PIX"}]})");
    REQUIRE(run.code == 0);
    CHECK(nlohmann::json::parse(run.out)["allocation"]["gpus"] == nlohmann::json({1, 2}));
  }
  SECTION("labels of a node-group template") {
    TopoOptions options;
    options.labels = {"node.kubernetes.io/instance-type=g5.48xlarge", "nvidia.com/gpu.count=8"};
    options.gpus = 4;
    options.json = true;
    const Run run = RunWith(options);
    REQUIRE(run.code == 0);
    const nlohmann::json out = nlohmann::json::parse(run.out);
    CHECK(out["summary"]["source"] == "catalog:g5.48xlarge");
    // one NUMA half: PHB, not across the sockets
    CHECK(out["allocation"]["weakestLink"] == "PHB");
  }
}

TEST_CASE("topo shows the NVLink domain a node's labels name", "[cli]") {
  TopoOptions options;
  options.labels = {"nvidia.com/gpu.product=NVIDIA-GB200", "nvidia.com/gpu.count=4",
                    "topology.k8s.aws/ultraserver-id=us-0a1b",
                    "nvidia.com/gpu.clique=8d9e3f2a-1b2c-4d5e-9f00-112233445566.7"};
  SECTION("the clique first, by default") {
    const Run run = RunWith(options);
    REQUIRE(run.code == 0);
    CHECK_THAT(run.out,
               Catch::Contains("NVLink domain:  8d9e3f2a-1b2c-4d5e-9f00-112233445566.7 (nvidia.com/gpu.clique)\n"));
  }
  SECTION("in the configured order, as JSON") {
    options.domain_labels = {"topology.k8s.aws/ultraserver-id", "nvidia.com/gpu.clique"};
    options.json = true;
    const Run run = RunWith(options);
    REQUIRE(run.code == 0);
    CHECK(nlohmann::json::parse(run.out)["summary"]["nvlinkDomain"] ==
          nlohmann::json({{"label", "topology.k8s.aws/ultraserver-id"}, {"value", "us-0a1b"}}));
  }
  SECTION("none, saying which labels were looked for") {
    options.labels = {"node.kubernetes.io/instance-type=p5.48xlarge"};
    const Run run = RunWith(options);
    REQUIRE(run.code == 0);
    CHECK_THAT(run.out, Catch::Contains(
                            "NVLink domain:  none (no nvidia.com/gpu.clique or topology.k8s.aws/ultraserver-id label)"));
    options.json = true;
    CHECK(nlohmann::json::parse(RunWith(options).out)["summary"]["nvlinkDomain"].is_null());
  }
  SECTION("a bad list of domain labels") {
    options.domain_labels = {"nvidia.com/gpu.clique", "nvidia.com/gpu.clique"};
    const Run run = RunWith(options);
    CHECK(run.code == 1);
    CHECK_THAT(run.err, Catch::Contains("nvidia.com/gpu.clique is listed twice"));
  }
}

TEST_CASE("topo exits 2 with the reason when the request does not fit", "[cli]") {
  TopoOptions options = Shape("g5.48xlarge", 2);
  options.json = false;
  options.min_link = "NV";
  const Run run = RunWith(options);
  CHECK(run.code == 2);
  CHECK_THAT(run.out, Catch::Contains("no fit:  needs links of NV or better, best reachable is PHB"));
}

TEST_CASE("topo rejects bad input with a message and exit 1", "[cli]") {
  struct Row {
    const char* name;
    TopoOptions options;
    std::string stdin_text;
    const char* message;
  };
  TopoOptions no_source;
  TopoOptions garbage;
  garbage.file = "-";
  TopoOptions duplicate = Shape("dgx-a100", 2);
  duplicate.free = "1,2,1";
  TopoOptions too_many = Shape("dgx-a100", 9);
  TopoOptions bad_link = Shape("dgx-a100", 2);
  bad_link.min_link = "FAST";
  TopoOptions bad_bandwidth = Shape("dgx-a100", 2);
  bad_bandwidth.min_bandwidth = "lots";
  TopoOptions unknown_shape = Shape("p9.mega", 2);
  TopoOptions missing_file;
  missing_file.file = "/nonexistent/topo.txt";
  TopoOptions bad_label;
  bad_label.labels = {"no-equals-sign"};
  const Row rows[] = {
      {"no source", no_source, "", "give exactly one of"},
      {"garbage text", garbage, "hello\nworld\n", "line 1"},
      {"duplicate free id", duplicate, "", "listed twice"},
      {"more GPUs than the node", too_many, "", "9 GPUs requested from a node of 8"},
      {"unknown min-link", bad_link, "", "unknown link \"FAST\""},
      {"bad bandwidth", bad_bandwidth, "", "not a bandwidth"},
      {"unknown shape", unknown_shape, "", "p9.mega"},
      {"missing file", missing_file, "", "cannot read /nonexistent/topo.txt"},
      {"label without =", bad_label, "", "key=value"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const Run run = RunWith(row.options, row.stdin_text);
      CHECK(run.code == 1);
      CHECK_THAT(run.err, Catch::Contains(row.message));
    }
  }
}

TEST_CASE("topo rejects an oversized input without reading it all", "[cli]") {
  TopoOptions options;
  options.file = "-";
  const Run run = RunWith(options, std::string((1 << 20) + 10, 'x'));
  CHECK(run.code == 1);
  CHECK_THAT(run.err, Catch::Contains("larger than"));
}

TEST_CASE("topo lists the catalog", "[cli]") {
  TopoOptions options;
  options.list_shapes = true;
  const Run run = RunWith(options);
  CHECK(run.code == 0);
  CHECK_THAT(run.out, Catch::Contains("dgx-a100\n") && Catch::Contains("gb200-nvl72-node\n"));
}

}  // namespace
}  // namespace topofit::cli
