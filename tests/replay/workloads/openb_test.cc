#include "replay/workloads/openb.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "replay/workloads/fleet_file.h"
#include "tests/kube/status_matchers.h"
#include "tests/replay/workloads/workload_testing.h"

namespace topofit::sim {
namespace {

using testing::ScratchDir;

// One node of every GPU model and board the trace has, plus a second variant of the 2x P100 node.
constexpr const char* kNodeList = R"(sn,cpu_milli,memory_mib,gpu,model
n0,16000,122880,2,P100
n1,16000,122880,2,P100
n2,64000,262144,2,P100
n3,96000,393216,4,T4
n4,64000,262144,8,V100M16
n5,96000,786432,8,V100M32
n6,32000,131072,4,V100M16
n7,128000,1048576,1,A10
n8,96000,393216,8,G2
n9,128000,786432,8,G3
)";

const std::string kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
    "scheduled_time\n";

std::string TraceDir() { return (testing::SharedDir() / "traces" / "alibaba-gpu-v2023").string(); }

OpenbOptions RealTrace() {
  OpenbOptions options;
  options.trace_dir = TraceDir();
  return options;
}

// A scratch trace of kNodeList and these pods.
OpenbOptions HandWritten(const ScratchDir& dir, const std::string& pod_rows) {
  dir.Write("nodes.csv", kNodeList);
  dir.Write("pods.csv", kPodHeader + pod_rows);
  OpenbOptions options;
  options.trace_dir = dir.path();
  options.node_list = "nodes.csv";
  options.pod_list = "pods.csv";
  return options;
}

const NodeGroupSpec* FindGroup(const Workload& workload, const std::string& name) {
  for (const NodeGroupSpec& group : workload.groups) {
    if (group.name == name) return &group;
  }
  return nullptr;
}

TEST_CASE("openb node groups: a catalog shape where one fits, the PCIe fallback elsewhere", "[openb]") {
  ScratchDir dir("openb-groups");
  const absl::StatusOr<Workload> workload = LoadOpenb(HandWritten(dir, ""));
  REQUIRE_OK(workload);
  REQUIRE(workload->groups.size() == 9);  // ten nodes, two of them alike

  struct Expected {
    const char* group;
    const char* shape;
    bool fallback;
    int max_size;
  };
  const Expected table[] = {
      {"openb-p100-2gpu-16c-120gi", "", true, 2},
      {"openb-p100-2gpu-64c-256gi", "", true, 1},
      {"openb-t4-4gpu-96c-384gi", "g4dn.12xlarge", false, 1},
      {"openb-v100m16-8gpu-64c-256gi", "p3.16xlarge", false, 1},
      {"openb-v100m32-8gpu-96c-768gi", "p3dn.24xlarge", false, 1},
      {"openb-v100m16-4gpu-32c-128gi", "", true, 1},  // no 4x V100 shape in the catalog
      {"openb-a10-1gpu-128c-1024gi", "", true, 1},
      {"openb-g2-8gpu-96c-384gi", "", true, 1},  // undisclosed model
      {"openb-g3-8gpu-128c-768gi", "", true, 1},
  };
  for (const Expected& row : table) {
    INFO(row.group);
    const NodeGroupSpec* group = FindGroup(*workload, row.group);
    REQUIRE(group != nullptr);
    CHECK(group->shape == row.shape);
    CHECK(group->max_size == row.max_size);
    CHECK(group->initial_size == 0);
    const absl::StatusOr<topology::LabelledTopology> resolved = testing::GroupTopology(*group);
    REQUIRE_OK(resolved);
    CHECK(resolved->fallback == row.fallback);
    CHECK(resolved->topology.gpu_count() == group->gpus);
  }
  // 8 x $2.48 (V100) + 64 vCPU x $0.033174 + 256 GiB x $0.004446 = 19.84 + 2.123136 + 1.138176
  CHECK(FindGroup(*workload, "openb-v100m16-8gpu-64c-256gi")->price_per_hour == Approx(23.101312));
}

TEST_CASE("openb pods: times, whole GPUs for shared ones, gpu_spec as product labels, NV for multi-GPU",
          "[openb]") {
  ScratchDir dir("openb-pods");
  OpenbOptions options = HandWritten(dir,
                                     "p-b,1000,1024,1,500,V100M16|V100M32,LS,Running,10,100,12\n"
                                     "p-a,2000,2048,4,1000,,LS,Running,10,50,10\n"
                                     "p-c,1000,1024,1,1000,G2,BE,Pending,5,9,\n"
                                     "p-d,500,512,0,0,nan,BE,Failed,20,15,20\n");
  const absl::StatusOr<Workload> workload = LoadOpenb(options);
  REQUIRE_OK(workload);
  REQUIRE(workload->pods.size() == 4);
  const std::vector<PodSpec>& pods = workload->pods;

  // Sorted by arrival (creation_time), then name.
  CHECK(pods[0].name == "p-c");
  CHECK(pods[1].name == "p-a");
  CHECK(pods[2].name == "p-b");
  CHECK(pods[3].name == "p-d");

  CHECK(pods[0].arrival == 5 * kSecond);
  CHECK(pods[0].duration == 4 * kSecond);  // never scheduled: creation 5 to deletion 9
  CHECK(pods[0].gpu_products == std::vector<std::string>{"G2"});

  CHECK(pods[1].gpus == 4);
  CHECK(pods[1].duration == 40 * kSecond);
  CHECK(pods[1].min_link == "NV");
  CHECK(pods[1].topology_policy == "preferred");
  CHECK(pods[1].comm_fraction == 0.3);
  CHECK(pods[1].kind == "trace");

  CHECK(pods[2].gpus == 1);  // gpu_milli 500: one whole GPU
  CHECK(pods[2].duration == 88 * kSecond);  // scheduled 12 to deleted 100
  CHECK(pods[2].gpu_products == std::vector<std::string>{"Tesla-V100-SXM2-16GB", "Tesla-V100-SXM2-32GB"});
  CHECK(pods[2].min_link.empty());
  CHECK(pods[2].comm_fraction == 0);

  CHECK(pods[3].gpus == 0);
  CHECK(pods[3].duration == 1);  // deleted before it was scheduled: clamped
  CHECK(pods[3].gpu_products.empty());  // "nan": no constraint

  CHECK_THAT(workload->description, Catch::Contains("1 GPU-sharing pods"));
  CHECK_THAT(workload->description, Catch::Contains("1 pods never scheduled"));
  CHECK_THAT(workload->description, Catch::Contains("1 pods deleted before they started"));

  options.multi_gpu_nv_required = true;
  const absl::StatusOr<Workload> required = LoadOpenb(options);
  REQUIRE_OK(required);
  CHECK(required->pods[1].topology_policy == "required");
}

TEST_CASE("openb: a malformed row is an error naming the file and the line", "[openb]") {
  ScratchDir dir("openb-malformed");
  OpenbOptions options = HandWritten(dir, "");
  dir.Write("bad-number.csv", kPodHeader + "p-a,1000,1024,1,1000,,LS,Running,0,10,0\n"
                                                        "p-b,lots,1024,1,1000,,LS,Running,0,10,0\n");
  dir.Write("short-row.csv", kPodHeader + "p-a,1000,1024,1\n");

  options.pod_list = "bad-number.csv";
  CHECK_STATUS(LoadOpenb(options), absl::StatusCode::kInvalidArgument, "bad-number.csv:3: cpu_milli \"lots\"");
  options.pod_list = "short-row.csv";
  CHECK_STATUS(LoadOpenb(options), absl::StatusCode::kInvalidArgument, "short-row.csv:2: 4 fields");
  options.pod_list = "missing.csv";
  CHECK_STATUS(LoadOpenb(options), absl::StatusCode::kNotFound, "missing.csv");
}

TEST_CASE("openb default trace, read in place: counts, GPU distribution, order", "[openb][trace]") {
  if (!std::filesystem::exists(TraceDir())) {
    WARN("skipped: no openb trace at " << TraceDir() << " (set TOPOFIT_SHARED_DIR)");
    return;
  }
  const absl::StatusOr<Workload> workload = LoadOpenb(RealTrace());
  REQUIRE_OK(workload);
  REQUIRE(workload->pods.size() == 8152);

  std::map<int, int> pods_by_gpus;
  for (const PodSpec& pod : workload->pods) ++pods_by_gpus[pod.gpus];
  CHECK(pods_by_gpus == std::map<int, int>{{0, 1088}, {1, 6989}, {2, 16}, {4, 15}, {8, 44}});

  int nodes = 0;
  for (const NodeGroupSpec& group : workload->groups) {
    INFO(group.name);
    nodes += group.max_size;
    CHECK(group.initial_size == 0);
    const absl::StatusOr<topology::LabelledTopology> resolved = testing::GroupTopology(group);
    REQUIRE_OK(resolved);
    CHECK(resolved->topology.gpu_count() == group.gpus);
  }
  CHECK(nodes == 1213);

  CHECK(testing::SortedByArrivalThenName(workload->pods));
  CHECK(workload->pods.front().name == "openb-pod-0000");
}

TEST_CASE("openb full node list: the trace's CPU-only nodes become node groups without GPUs", "[openb][trace]") {
  if (!std::filesystem::exists(TraceDir())) {
    WARN("skipped: no openb trace at " << TraceDir() << " (set TOPOFIT_SHARED_DIR)");
    return;
  }
  OpenbOptions options = RealTrace();
  options.node_list = "openb_node_list_all_node.csv";
  const absl::StatusOr<Workload> workload = LoadOpenb(options);
  REQUIRE_OK(workload);
  int nodes = 0, cpu_nodes = 0, cpu_groups = 0;
  for (const NodeGroupSpec& group : workload->groups) {
    nodes += group.max_size;
    if (group.gpus > 0) continue;
    INFO(group.name);
    ++cpu_groups;
    cpu_nodes += group.max_size;
    CHECK(group.gpu_product.empty());
    CHECK(group.shape.empty());
    CHECK(group.price_per_hour > 0);
  }
  CHECK(nodes == 1523);
  CHECK(cpu_nodes == 310);
  CHECK(cpu_groups == 12);
}

TEST_CASE("openb default trace: time compression and the paper's fixed inter-arrival", "[openb][trace]") {
  if (!std::filesystem::exists(TraceDir())) {
    WARN("skipped: no openb trace at " << TraceDir() << " (set TOPOFIT_SHARED_DIR)");
    return;
  }
  const absl::StatusOr<Workload> plain = LoadOpenb(RealTrace());
  OpenbOptions compressed_options = RealTrace();
  compressed_options.time_compression = 60;
  compressed_options.initial_size_from_trace = true;
  const absl::StatusOr<Workload> compressed = LoadOpenb(compressed_options);
  REQUIRE_OK(plain);
  REQUIRE_OK(compressed);
  REQUIRE(compressed->pods.size() == plain->pods.size());
  for (size_t i = 0; i < plain->pods.size(); ++i) {
    const PodSpec& before = plain->pods[i];
    const PodSpec& after = compressed->pods[i];
    INFO(before.name);
    REQUIRE(after.name == before.name);
    CHECK(after.arrival == std::llround(before.arrival / 60.0));
    CHECK(after.duration == std::max<SimTime>(std::llround(before.duration / 60.0), 1));
  }
  for (const NodeGroupSpec& group : compressed->groups) CHECK(group.initial_size == group.max_size);

  OpenbOptions in_order = RealTrace();
  in_order.fixed_interarrival = 2 * kSecond;
  const absl::StatusOr<Workload> paper = LoadOpenb(in_order);
  REQUIRE_OK(paper);
  CHECK(paper->pods[0].name == "openb-pod-0000");
  CHECK(paper->pods[8151].name == "openb-pod-8151");
  CHECK(paper->pods[8151].arrival == 8151 * 2 * kSecond);
}

TEST_CASE("openb lists without times: submitted in order, each for untimed_duration", "[openb][trace]") {
  if (!std::filesystem::exists(TraceDir())) {
    WARN("skipped: no openb trace at " << TraceDir() << " (set TOPOFIT_SHARED_DIR)");
    return;
  }
  OpenbOptions options = RealTrace();
  options.pod_list = "openb_pod_list_multigpu50.csv";
  CHECK_STATUS(LoadOpenb(options), absl::StatusCode::kInvalidArgument, "set fixed_interarrival");

  options.fixed_interarrival = kSecond;
  options.untimed_duration = 30 * kMinute;
  const absl::StatusOr<Workload> workload = LoadOpenb(options);
  REQUIRE_OK(workload);
  REQUIRE(workload->pods.size() == 9061);
  CHECK(workload->pods[10].arrival == 10 * kSecond);
  CHECK(workload->pods[10].duration == 30 * kMinute);
}

TEST_CASE("The shipped openb fleet file is the openb workload's own fleet", "[openb][trace][fleet]") {
  if (!std::filesystem::exists(TraceDir())) {
    if (std::getenv("CI") != nullptr) FAIL("no openb trace at " << TraceDir() << " (set TOPOFIT_SHARED_DIR)");
    WARN("skipped: no openb trace at " << TraceDir() << " (set TOPOFIT_SHARED_DIR)");
    return;
  }
  const absl::StatusOr<Workload> workload = LoadOpenb(RealTrace());
  REQUIRE_OK(workload);
  std::ifstream in(std::string(TOPOFIT_SOURCE_DIR) + "/bench/fleets/openb.yaml");
  std::stringstream text;
  text << in.rdbuf();
  // the file is `topofit bench --workload openb --print-fleet` under a comment header
  const std::string file = text.str();
  const size_t body = file.find("groups:");
  REQUIRE(body != std::string::npos);
  CHECK(file.substr(body) == FleetYaml(workload->groups));
}

}  // namespace
}  // namespace topofit::sim
