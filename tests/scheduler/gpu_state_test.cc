#include "scheduler/gpu_state.h"

#include <atomic>
#include <random>
#include <thread>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "decision/filter.h"
#include "tests/kube/builders.h"
#include "tests/server/fake_clock.h"

namespace topofit::scheduler {
namespace {

using kube::testing::MakeNode;
using kube::testing::MakePod;
using topology::GpuSet;

PodRef Pod(const std::string& name) { return PodRef{"uid-" + name, "default", name}; }

TEST_CASE("gpu state assumes, refuses overlaps, and forgets", "[gpu_state]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  REQUIRE(state->UpsertNode(MakeNode().name("n").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8)).ok());
  CHECK(state->Snapshot("n")->free() == GpuSet::FromMask(0xff));
  CHECK(state->Snapshot("n")->topology_origin == "catalog:dgx-a100");

  REQUIRE(state->Assume(Pod("a"), "n", GpuSet::FromMask(0b0011)).ok());
  CHECK(state->Assume(Pod("a"), "n", GpuSet::FromMask(0b0011)).ok());  // idempotent
  CHECK(state->Assume(Pod("a"), "n", GpuSet::FromMask(0b1100)).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(state->Assume(Pod("b"), "n", GpuSet::FromMask(0b0110)).code() == absl::StatusCode::kFailedPrecondition);
  CHECK(state->Assume(Pod("b"), "gone", GpuSet::FromMask(0b0110)).code() == absl::StatusCode::kNotFound);
  CHECK(state->Snapshot("n")->free() == GpuSet::FromMask(0b11111100));
  CHECK(state->AssignmentOf("uid-a")->second == GpuSet::FromMask(0b0011));

  CHECK(state->Forget("uid-a"));
  CHECK_FALSE(state->Forget("uid-a"));
  CHECK(state->Snapshot("n")->free() == GpuSet::FromMask(0xff));
}

TEST_CASE("GPUs a node's ResourceSlices publish are offered beside its nvidia.com/gpu", "[gpu_state][dra]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  // Only the DRA driver hands out this node's GPUs: nothing is allocatable through the device plugin.
  REQUIRE(state->UpsertNode(MakeNode().name("n").label("node.kubernetes.io/instance-type", "p4d.24xlarge")).ok());
  CHECK(state->Snapshot("n")->free().empty());
  state->OfferThroughDra("n", 8);
  CHECK(state->Snapshot("n")->free() == GpuSet::FromMask(0xff));
  // Kept across the node's updates, and with pods on it as with the device plugin's GPUs.
  REQUIRE(state->UpsertNode(MakeNode().name("n").label("node.kubernetes.io/instance-type", "p4d.24xlarge")).ok());
  REQUIRE(state->Assume(Pod("a"), "n", GpuSet::FromMask(0b11)).ok());
  CHECK(state->Snapshot("n")->free().size() == 6);
  // Half published: the other half counts as not offered, placed pessimistically.
  state->OfferThroughDra("n", 4);
  CHECK(state->Snapshot("n")->free().size() == 2);
  state->OfferThroughDra("n", 0);
  CHECK(state->Snapshot("n")->free().empty());
  state->OfferThroughDra("unknown", 8);  // nothing to offer on
  CHECK(state->Snapshot("unknown") == nullptr);
}

TEST_CASE("SnapshotsOf answers as Snapshot does, name by name, in the order named", "[gpu_state]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  REQUIRE(state->UpsertNode(MakeNode().name("a").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8)).ok());
  REQUIRE(state->UpsertNode(MakeNode().name("b").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8)).ok());
  REQUIRE(state->Assume(Pod("x"), "b", GpuSet::FromMask(0b1)).ok());
  const auto snapshots = state->SnapshotsOf({"b", "unknown", "a", "b"});
  REQUIRE(snapshots.size() == 4);
  CHECK(snapshots[0] == state->Snapshot("b"));
  CHECK(snapshots[1] == nullptr);
  CHECK(snapshots[2] == state->Snapshot("a"));
  CHECK(snapshots[3] == state->Snapshot("b"));
  CHECK(snapshots[0]->free() == GpuSet::FromMask(0xfe));
  CHECK(state->SnapshotsOf({}).empty());
}

TEST_CASE("a snapshot SnapshotsOf gave stays as it was while the node changes and goes", "[gpu_state]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  const std::string long_name = std::string(200, 'x') + ".compute.internal";  // beyond a slot's inline bytes
  for (const std::string& name : {std::string("a"), long_name}) {
    REQUIRE(state->UpsertNode(MakeNode().name(name).label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8)).ok());
  }
  const auto held = state->SnapshotsOf({"a", long_name});
  REQUIRE(held[1] != nullptr);
  CHECK(held[1]->node == long_name);
  REQUIRE(state->Assume(Pod("x"), "a", GpuSet::FromMask(0b1)).ok());
  state->RemoveNode(long_name);
  CHECK(state->Snapshot(long_name) == nullptr);
  // Read after the change and the removal: the pointers still hold the snapshots as they were.
  CHECK(held[0]->free() == GpuSet::FromMask(0xff));
  CHECK(held[1]->free() == GpuSet::FromMask(0xff));
  CHECK(held[1]->node == long_name);
  CHECK(state->SnapshotsOf({"a"})[0]->free() == GpuSet::FromMask(0xfe));
}

TEST_CASE("GPUs topofit did not place are placed pessimistically", "[gpu_state]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  // g5.48xlarge with 7 allocatable: one GPU is not offered, and which one is unknown.
  REQUIRE(state->UpsertNode(MakeNode().name("n").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(7).resourceVersion("1")).ok());
  CHECK(state->Snapshot("n")->free().size() == 7);
  // A pod reported with ids, and one with only a count.
  REQUIRE(state->ObservePod(Pod("ids"), "n", 2, GpuSet::FromMask(0b11)).ok());
  REQUIRE(state->ObservePod(Pod("count"), "n", 1, std::nullopt).ok());
  const auto snapshot = state->Snapshot("n");
  CHECK(snapshot->free().size() == 4);
  CHECK_FALSE(snapshot->free().contains(GpuSet::FromMask(0b11)));
  CHECK(state->ObservePod(Pod("bad"), "n", 2, GpuSet::FromMask(0b1)).code() == absl::StatusCode::kInvalidArgument);
  CHECK(state->ObservePod(Pod("bad"), "n", 1, GpuSet::FromMask(1u << 9)).code() == absl::StatusCode::kInvalidArgument);
  // the same resourceVersion is not re-read; a new one with all 8 allocatable frees the unknown GPU
  REQUIRE(state->UpsertNode(MakeNode().name("n").label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8).resourceVersion("2")).ok());
  CHECK(state->Snapshot("n")->free().size() == 5);
  CHECK(state->Forget("uid-count"));
  CHECK(state->Snapshot("n")->free().size() == 6);
}

kube::Node P4d(const std::string& name) {
  return MakeNode().name(name).label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8).resourceVersion("1");
}

TEST_CASE("nodes no request names are forgotten unless pods hold GPUs there", "[gpu_state][hostile]") {
  // Without --live-state every node a /filter named was kept for ever: anyone who reaches the extender
  // could fill its memory with made-up nodes (issue 15).
  server::FakeClock clock;
  std::vector<std::string> forgotten;
  GpuStateLimits limits;
  limits.forget_unseen_after = absl::Minutes(10);
  limits.max_nodes = 3;
  limits.on_forgotten = [&](const std::string& node) { forgotten.push_back(node); };
  std::unique_ptr<GpuState> state = NewInMemoryGpuState(clock, limits);
  for (const char* name : {"idle", "busy", "named"}) REQUIRE(state->UpsertNode(P4d(name)).ok());
  REQUIRE(state->Assume(Pod("a"), "busy", GpuSet::FromMask(0b1)).ok());

  clock.Advance(absl::Minutes(6));
  REQUIRE(state->Snapshot("named") != nullptr);      // a NodeNames request names it
  REQUIRE(state->UpsertNode(P4d("busy")).ok());      // unchanged, but seen
  clock.Advance(absl::Minutes(5));                    // idle unseen for 11 minutes, the others for 5
  REQUIRE(state->UpsertNode(P4d("new")).ok());  // the state is full: forgetting makes room
  CHECK(forgotten == std::vector<std::string>{"idle"});
  CHECK(state->Snapshot("idle") == nullptr);

  clock.Advance(absl::Minutes(20));  // everything unseen, but busy holds a pod: it stays
  REQUIRE(state->UpsertNode(P4d("newer")).ok());
  CHECK(forgotten == std::vector<std::string>{"idle", "named", "new"});
  CHECK(state->AssignmentOf("uid-a")->first == "busy");
  REQUIRE(state->UpsertNode(P4d("idle")).ok());  // named again: learnt again
  CHECK(state->Snapshot("idle")->free().size() == 8);
}

TEST_CASE("a NodeNames lookup counts as naming each node it finds", "[gpu_state][hostile]") {
  // The time a node was last named lives in its slot of the name index, written by SnapshotsOf too (and
  // copied when the index grows): a node only NodeNames requests name must not be forgotten as unseen.
  server::FakeClock clock;
  std::vector<std::string> forgotten;
  GpuStateLimits limits;
  limits.forget_unseen_after = absl::Minutes(10);
  limits.max_nodes = 40;
  limits.on_forgotten = [&](const std::string& node) { forgotten.push_back(node); };
  std::unique_ptr<GpuState> state = NewInMemoryGpuState(clock, limits);
  for (const char* name : {"named", "unnamed"}) REQUIRE(state->UpsertNode(P4d(name)).ok());
  clock.Advance(absl::Minutes(6));
  const auto found = state->SnapshotsOf({"named", "never-seen"});
  REQUIRE(found.size() == 2);
  CHECK(found[0] != nullptr);
  CHECK(found[1] == nullptr);
  for (int i = 0; i < 30; ++i) REQUIRE(state->UpsertNode(P4d(absl::StrCat("grow-", i))).ok());  // the index grows
  clock.Advance(absl::Minutes(5));  // unnamed unseen for 11 minutes, named for 5
  for (int i = 30; i < 38; ++i) REQUIRE(state->UpsertNode(P4d(absl::StrCat("grow-", i))).ok());
  REQUIRE(state->UpsertNode(P4d("new")).ok());  // full: forgetting makes room
  CHECK(forgotten == std::vector<std::string>{"unnamed"});
  CHECK(state->Snapshot("named") != nullptr);
}

TEST_CASE("a flood of invented nodes pushes out its own: real nodes named later always find room",
          "[gpu_state][hostile]") {
  // One /filter of 15,000 invented nodes filled the node table without --live-state: real nodes named
  // afterwards were refused as unresolvable while the invented ones kept being named (issue 38).
  server::FakeClock clock;
  std::vector<std::string> evicted;
  GpuStateLimits limits;
  limits.forget_unseen_after = absl::Minutes(10);
  limits.max_nodes = 100;
  limits.on_evicted = [&](const std::string& node) { evicted.push_back(node); };
  std::unique_ptr<GpuState> state = NewInMemoryGpuState(clock, limits);
  REQUIRE(state->UpsertNode(P4d("real-busy")).ok());
  REQUIRE(state->Assume(Pod("trainer"), "real-busy", GpuSet::FromMask(0b1)).ok());
  clock.Advance(absl::Seconds(1));
  for (int round = 0; round < 3; ++round) {  // the flood, named again and again
    for (int i = 0; i < 150; ++i) CHECK(state->UpsertNode(P4d(absl::StrCat("invented-", i))).ok());
    clock.Advance(absl::Seconds(1));
  }
  // A request naming real nodes never seen: each is learnt, and the flood's least recently named go.
  for (int i = 0; i < 20; ++i) {
    const absl::Status learned = state->UpsertNode(P4d(absl::StrCat("real-", i)));
    INFO(learned.message());
    CHECK(learned.ok());
    CHECK(state->Snapshot(absl::StrCat("real-", i)) != nullptr);
  }
  CHECK(state->AssignmentOf("uid-trainer")->first == "real-busy");  // a node holding pods stays
  REQUIRE_FALSE(evicted.empty());
  for (const std::string& node : evicted) CHECK(node.rfind("invented-", 0) == 0);
  CHECK(state->Snapshots().size() <= 100);
}

TEST_CASE("nodes from the watch never make room for nodes from requests", "[gpu_state][hostile]") {
  server::FakeClock clock;
  GpuStateLimits limits;
  limits.max_nodes = 10;
  std::unique_ptr<GpuState> state = NewInMemoryGpuState(clock, limits);
  for (int i = 0; i < 8; ++i) REQUIRE(state->UpsertNode(P4d(absl::StrCat("watched-", i)), NodeSource::kWatch).ok());
  clock.Advance(absl::Seconds(1));
  for (int i = 0; i < 50; ++i) CHECK(state->UpsertNode(P4d(absl::StrCat("invented-", i))).ok());
  for (int i = 0; i < 8; ++i) CHECK(state->Snapshot(absl::StrCat("watched-", i)) != nullptr);
  // A node the watch brings takes the place of one from a request.
  REQUIRE(state->UpsertNode(P4d("watched-8"), NodeSource::kWatch).ok());
  REQUIRE(state->UpsertNode(P4d("watched-9"), NodeSource::kWatch).ok());
  // A request naming a watched node (even at another resourceVersion) does not make it evictable.
  REQUIRE(state->UpsertNode(MakeNode().name("watched-0").label("node.kubernetes.io/instance-type", "p4d.24xlarge")
                                .gpus(8).resourceVersion("2")).ok());
  // Only watched nodes left: a new node is refused, and says why.
  const absl::Status full = state->UpsertNode(P4d("invented-x"));
  CHECK(full.code() == absl::StatusCode::kResourceExhausted);
  CHECK(full.message() == "topofit already keeps 10 nodes, its limit, all watched or holding pods");
  for (int i = 0; i < 10; ++i) CHECK(state->Snapshot(absl::StrCat("watched-", i)) != nullptr);
}

// get_topology (MCP) tells where a node's topology came from: the snapshot carries the resolver's origin
// and why.
TEST_CASE("a node's snapshot says where its topology came from", "[gpu_state]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  const std::string nvlink_pair = "\tGPU0\tGPU1\nGPU0\t X \tNV2\nGPU1\tNV2\t X \n";
  struct Row {
    const char* name;
    kube::Node node;
    const char* origin;
    const char* reason;
  };
  const Row rows[] = {
      {"the instance type", MakeNode().name("a").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8),
       "catalog:dgx-a100", "instance type p4d.24xlarge is catalog shape dgx-a100"},
      {"the product and count", MakeNode().name("b").label("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3").gpus(8),
       "catalog:hgx-h100", "8 x H100-SXM is catalog shape hgx-h100"},
      {"nvidia-smi text", MakeNode().name("c").gpus(2).annotation("topofit.io/gpu-topology", nvlink_pair), "annotation",
       "annotation topofit.io/gpu-topology: nvidia-smi topo -m output"},
      {"a descriptor", MakeNode().name("d").gpus(2).annotation("topofit.io/gpu-topology", R"({"gpus":[{},{}]})"),
       "annotation", "annotation topofit.io/gpu-topology: a JSON descriptor"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.name);
    REQUIRE(state->UpsertNode(row.node).ok());
    const auto snapshot = state->Snapshot(row.node.metadata.name);
    CHECK(snapshot->topology_origin == row.origin);
    CHECK(snapshot->topology_reason == row.reason);
  }
  REQUIRE(state->UpsertNode(MakeNode().name("e").label("nvidia.com/gpu.product", "NVIDIA-A10G").gpus(3)).ok());  // no 3-GPU shape
  CHECK_THAT(state->Snapshot("e")->topology_origin, Catch::StartsWith("fallback: "));
  CHECK(state->Snapshot("e")->topology_reason == state->Snapshot("e")->topology_origin.substr(10));
}

TEST_CASE("a node whose topology cannot be resolved is an error, not a crash", "[gpu_state]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  CHECK(state->UpsertNode(MakeNode().name("cpu-only")).code() == absl::StatusCode::kInvalidArgument);
  CHECK(state->UpsertNode(MakeNode().name("bad").gpus(8).annotation("topofit.io/gpu-topology", "GPU0 X NV9\n"))
            .code() == absl::StatusCode::kInvalidArgument);
  CHECK(state->Snapshot("bad") == nullptr);
}

// Many threads choose and claim GPUs on few nodes at once, as concurrent binds do; after every step no
// GPU is held twice, and every claim that succeeded is in the state.
TEST_CASE("concurrent claims never share a GPU", "[gpu_state][concurrency]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  for (const char* name : {"n0", "n1"}) {
    REQUIRE(state->UpsertNode(MakeNode().name(name).label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8)).ok());
  }
  constexpr int kThreads = 8, kRounds = 300;
  std::atomic<int> claims{0}, violations{0};
  auto worker = [&](int thread) {
    std::mt19937 rng(thread);
    for (int round = 0; round < kRounds; ++round) {
      const std::string node = rng() % 2 ? "n0" : "n1";
      const PodRef pod = Pod(absl::StrCat("t", thread, "-", round));
      const decision::GpuDemand demand = *decision::DemandOf(MakePod().gpus(1 + rng() % 3));
      const decision::NodeVerdict verdict = decision::FilterNode(demand, *state->Snapshot(node));
      if (verdict.fits && state->Assume(pod, node, verdict.chosen->gpus).ok()) {
        ++claims;
        // invariant after the step: the pod's GPUs are ours and nobody else's
        const auto snapshot = state->Snapshot(node);
        GpuSet seen;
        for (const auto& [uid, gpus] : snapshot->by_pod) {
          if (!(seen & gpus).empty()) ++violations;
          seen = seen | gpus;
        }
        if (!snapshot->by_pod.count(pod.uid)) ++violations;
        if (rng() % 2) state->Forget(pod.uid);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread& t : threads) t.join();
  CHECK(violations == 0);
  CHECK(claims > 0);
  for (const char* name : {"n0", "n1"}) {
    const auto snapshot = state->Snapshot(name);
    GpuSet seen;
    for (const auto& [uid, gpus] : snapshot->by_pod) {
      CHECK((seen & gpus).empty());
      seen = seen | gpus;
    }
    CHECK(seen == snapshot->ours);
  }
}

}  // namespace
}  // namespace topofit::scheduler
