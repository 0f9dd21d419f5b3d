#include "kubeclient/gpu_state_sync.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/sinks/null_sink.h>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "codec/dra_json.h"
#include "codec/kube_json.h"
#include "tests/kube/dra_fixtures.h"
#include "tests/kube/status_matchers.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/fake_clock.h"

namespace topofit::kubeclient {
namespace {

using scheduler::GpuState;
using scheduler::PodRef;
using testing::DirectClientFor;
using testing::Eventually;
using testing::FakeApiServer;
using testing::kPatience;
using testing::NodeJson;
using testing::PodJson;
using testing::Resource;
using topology::GpuSet;

GpuSet Ids(const std::string& text) { return GpuSet::Parse(text, 8).value(); }

// A pod in the API server's shape: bound to `node` (unless empty), asking for `gpus`, with the ids
// topofit wrote at bind (unless empty).
nlohmann::json GpuPodJson(const std::string& name, const std::string& node, int gpus, const std::string& ids = "") {
  nlohmann::json pod = PodJson("ml", name, node, "topofit");
  pod["metadata"]["uid"] = "uid-" + name;
  const std::string count = std::to_string(gpus);
  pod["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", count}}},
                                               {"requests", {{"nvidia.com/gpu", count}}}};
  if (!ids.empty()) pod["metadata"]["annotations"] = {{"topofit.io/gpu-ids", ids}};
  return pod;
}

PodRef Ref(const std::string& name) { return PodRef{"uid-" + name, "ml", name}; }

// Per node: which pod holds which GPUs, and every GPU in use. What "the same occupancy" means.
struct Occupancy {
  std::map<std::string, GpuSet> by_pod;
  GpuSet used;
  bool operator==(const Occupancy&) const = default;
};

std::map<std::string, Occupancy> OccupancyOf(const GpuState& state, const std::vector<std::string>& nodes) {
  std::map<std::string, Occupancy> out;
  for (const std::string& node : nodes) {
    auto snapshot = state.Snapshot(node);
    if (snapshot == nullptr) continue;
    Occupancy& o = out[node];
    o.by_pod.insert(snapshot->by_pod.begin(), snapshot->by_pod.end());
    o.used = snapshot->ours | snapshot->elsewhere;
  }
  return out;
}

// A fresh GpuState fed by a node watch and a pod watch against the fake server, as `extender` would run.
struct LiveState {
  LiveState(RestClient& rest, ListWatchOptions options)
      : sync(*state, log),
        nodes(ListWatcher::ForNodes(rest, options, sync.NodeHandler())),
        pods(ListWatcher::ForPods(rest, options, sync.PodHandler())) {
    nodes->Start();
    pods->Start();
  }
  bool WaitForSync() { return nodes->WaitForSync(kPatience) && pods->WaitForSync(kPatience); }

  std::unique_ptr<GpuState> state = scheduler::NewInMemoryGpuState();
  spdlog::logger log{"test", std::make_shared<spdlog::sinks::null_sink_mt>()};
  GpuStateSync sync;
  std::unique_ptr<ListWatcher> nodes;
  std::unique_ptr<ListWatcher> pods;
};

struct Fixture {
  Fixture() : certs(topofit::testing::TestCerts::Create().value()), server(*certs) {
    rest = DirectClientFor(server, *certs);
    options.watch_timeout = absl::Seconds(60);
    options.min_watch_duration = absl::ZeroDuration();
    options.clock = &clock;
    options.sleep = [this](absl::Duration d) {
      absl::MutexLock lock(&mu);
      clock.Advance(d);
    };
    options.uniform_random = [] { return 0.5; };
  }
  std::unique_ptr<LiveState> Start() { return std::make_unique<LiveState>(*rest, options); }

  std::unique_ptr<topofit::testing::TestCerts> certs;
  FakeApiServer server;
  std::unique_ptr<RestClient> rest;
  ListWatchOptions options;
  absl::Mutex mu;
  server::FakeClock clock;
};

TEST_CASE("GpuStateSync: after a restart, a fresh state rebuilt from the API has the same occupancy",
          "[live-state]") {
  Fixture f;
  // Before the restart: the extender learned the nodes and assumed each pod's GPUs at bind, then wrote
  // them to the pod (topofit.io/gpu-ids) and bound it.
  std::unique_ptr<GpuState> before = scheduler::NewInMemoryGpuState();
  for (const char* node : {"n1", "n2"}) {
    f.server.Upsert(Resource::kNodes, NodeJson(node, 8));
    REQUIRE_OK(before->UpsertNode(codec::NodeFromJson(NodeJson(node, 8)).value()));
  }
  struct Bound {
    const char* name;
    const char* node;
    int gpus;
    const char* ids;
  };
  const std::vector<Bound> bound = {
      {"train-0", "n1", 4, "0,1,2,3"},
      {"train-1", "n1", 2, "6,7"},
      {"infer-0", "n2", 1, "5"},
  };
  for (const Bound& b : bound) {
    REQUIRE_OK(before->Assume(Ref(b.name), b.node, Ids(b.ids)));
    f.server.Upsert(Resource::kPods, GpuPodJson(b.name, b.node, b.gpus, b.ids));
  }
  // Not holding GPUs: pending, finished, or asking for none.
  f.server.Upsert(Resource::kPods, GpuPodJson("pending", "", 2));
  nlohmann::json done = GpuPodJson("done", "n2", 4, "0,1,2,3");
  done["status"]["phase"] = "Succeeded";
  f.server.Upsert(Resource::kPods, done);
  f.server.Upsert(Resource::kPods, GpuPodJson("cpu-only", "n2", 0));

  auto live = f.Start();
  REQUIRE(live->WaitForSync());
  const std::vector<std::string> nodes = {"n1", "n2"};
  const auto expected = OccupancyOf(*before, nodes);
  CHECK(expected.at("n1").used == Ids("0,1,2,3,6,7"));
  CHECK(expected.at("n2").used == Ids("5"));
  // The two watches run on their own threads; pods that came before their node are observed with it.
  CHECK(Eventually([&] { return OccupancyOf(*live->state, nodes) == expected; }));
  for (const Bound& b : bound) {
    auto assignment = live->state->AssignmentOf(std::string("uid-") + b.name);
    REQUIRE(assignment.has_value());
    CHECK(assignment->first == b.node);
    CHECK(assignment->second == Ids(b.ids));
  }
  CHECK_FALSE(live->state->AssignmentOf("uid-done").has_value());
  CHECK(live->sync.stats().bad_gpu_ids == 0);
}

TEST_CASE("GpuStateSync: a pod deleted in the API releases its GPUs, a bound pod is observed", "[live-state]") {
  Fixture f;
  f.server.Upsert(Resource::kNodes, NodeJson("n1", 8));
  f.server.Upsert(Resource::kPods, GpuPodJson("a", "n1", 4, "0,1,2,3"));
  auto live = f.Start();
  REQUIRE(live->WaitForSync());
  REQUIRE(f.server.WaitForOpenWatches(2, kPatience));
  REQUIRE(Eventually([&] { return live->state->AssignmentOf("uid-a").has_value(); }));

  f.server.Upsert(Resource::kPods, GpuPodJson("b", "n1", 2, "4,5"));  // bound while watching
  REQUIRE(Eventually([&] { return live->state->AssignmentOf("uid-b").has_value(); }));
  CHECK(live->state->Snapshot("n1")->free() == Ids("6,7"));

  f.server.Delete(Resource::kPods, "ml", "a");
  REQUIRE(Eventually([&] { return !live->state->AssignmentOf("uid-a").has_value(); }));
  CHECK(live->state->Snapshot("n1")->free() == Ids("0,1,2,3,6,7"));

  nlohmann::json finished = GpuPodJson("b", "n1", 2, "4,5");
  finished["status"]["phase"] = "Failed";
  f.server.Upsert(Resource::kPods, finished);  // finished pods hold nothing
  REQUIRE(Eventually([&] { return !live->state->AssignmentOf("uid-b").has_value(); }));
  CHECK(live->state->Snapshot("n1")->free() == Ids("0,1,2,3,4,5,6,7"));
  CHECK(live->sync.stats().pods_forgotten == 2);
}

TEST_CASE("GpuStateSync: a relist after 410 Gone forgets pods that vanished while the watch was down",
          "[live-state]") {
  Fixture f;
  f.server.Upsert(Resource::kNodes, NodeJson("n1", 8));
  f.server.Upsert(Resource::kPods, GpuPodJson("stays", "n1", 2, "0,1"));
  f.server.Upsert(Resource::kPods, GpuPodJson("goes", "n1", 2, "2,3"));
  auto live = f.Start();
  REQUIRE(live->WaitForSync());
  REQUIRE(f.server.WaitForOpenWatches(2, kPatience));
  REQUIRE(Eventually([&] { return live->state->AssignmentOf("uid-goes").has_value(); }));

  // Deleted unseen, then the history compacted: the watches get 410 and relist.
  f.server.DeleteUnseen(Resource::kPods, "ml", "goes");
  f.server.Upsert(Resource::kPods, GpuPodJson("new", "n1", 1, "7"));
  f.server.Compact();
  REQUIRE(Eventually([&] { return live->pods->stats().gone >= 1 && live->pods->stats().lists >= 2; }));
  REQUIRE(Eventually([&] { return !live->state->AssignmentOf("uid-goes").has_value(); }));
  CHECK(live->state->AssignmentOf("uid-stays") == std::make_optional(std::make_pair(std::string("n1"), Ids("0,1"))));
  CHECK(live->state->AssignmentOf("uid-new") == std::make_optional(std::make_pair(std::string("n1"), Ids("7"))));
  CHECK(live->state->Snapshot("n1")->free() == Ids("2,3,4,5,6"));
  CHECK(live->sync.stats().pod_syncs >= 2);
}

// Direct calls, no server: the cases that depend on ordering between the two watches.
struct Direct {
  std::unique_ptr<GpuState> state = scheduler::NewInMemoryGpuState();
  spdlog::logger log{"test", std::make_shared<spdlog::sinks::null_sink_mt>()};
  GpuStateSync sync{*state, log};
};

kube::Pod Pod(const nlohmann::json& json) { return codec::PodFromJson(json).value(); }
kube::Node Node(const std::string& name) { return codec::NodeFromJson(NodeJson(name, 8)).value(); }

TEST_CASE("GpuStateSync: a pod topofit assumed at bind is confirmed, not disturbed, by the API", "[live-state]") {
  Direct d;
  d.sync.SyncNodes({Node("n1")});
  d.sync.SyncPods({});
  REQUIRE_OK(d.state->Assume(Ref("a"), "n1", Ids("2,3")));
  // The extender annotates before it binds: the annotation arrives while the pod is still unbound.
  d.sync.PodChanged(WatchEventType::kModified, Pod(GpuPodJson("a", "", 2, "2,3")));
  CHECK(d.state->Snapshot("n1")->ours == Ids("2,3"));
  d.sync.PodChanged(WatchEventType::kModified, Pod(GpuPodJson("a", "n1", 2, "2,3")));  // bound
  CHECK(d.state->Snapshot("n1")->ours == Ids("2,3"));
  // A relist that still lacks a pod the extender is binding leaves its assumption alone.
  REQUIRE_OK(d.state->Assume(Ref("b"), "n1", Ids("4")));
  d.sync.SyncPods({Pod(GpuPodJson("a", "n1", 2, "2,3"))});
  CHECK(d.state->Snapshot("n1")->ours == Ids("2,3,4"));
  // Deleted: released even though this feed never saw it bound.
  d.sync.PodChanged(WatchEventType::kDeleted, Pod(GpuPodJson("b", "", 1, "4")));
  CHECK(d.state->Snapshot("n1")->ours == Ids("2,3"));
}

TEST_CASE("GpuStateSync: pods before their node, bad annotations, nodes that go away", "[live-state]") {
  Direct d;
  d.sync.SyncPods({Pod(GpuPodJson("a", "n1", 2, "0,1")), Pod(GpuPodJson("bad", "n1", 2, "0,9")),
                   Pod(GpuPodJson("short", "n1", 2, "4"))});
  CHECK(d.state->Snapshot("n1") == nullptr);
  d.sync.SyncNodes({Node("n1")});
  CHECK(d.state->AssignmentOf("uid-a") == std::make_optional(std::make_pair(std::string("n1"), Ids("0,1"))));
  // Counted only, placed pessimistically: 4 GPUs more in use, ids unknown.
  CHECK_FALSE(d.state->AssignmentOf("uid-bad").has_value());
  CHECK_FALSE(d.state->AssignmentOf("uid-short").has_value());
  CHECK(d.state->Snapshot("n1")->free().size() == 8 - 2 - 2 - 2);
  CHECK(d.sync.stats().bad_gpu_ids == 2);

  d.sync.SyncNodes({});  // n1 vanished
  CHECK(d.state->Snapshot("n1") == nullptr);
  d.sync.NodeChanged(WatchEventType::kAdded, Node("n1"));  // and came back: its pods are observed again
  CHECK(d.state->AssignmentOf("uid-a") == std::make_optional(std::make_pair(std::string("n1"), Ids("0,1"))));
  CHECK(d.state->Snapshot("n1")->free().size() == 2);
}

using topofit::testing::DraFixture;

kube::ResourceSlice Slice() { return codec::ResourceSliceFromJson(DraFixture("resourceslice-v1.json")).value(); }
kube::ResourceClaim Claim() { return codec::ResourceClaimFromJson(DraFixture("resourceclaim-v1-allocated.json")).value(); }

TEST_CASE("GpuStateSync with DRA: a claim's GPUs are taken, never handed to a device-plugin pod", "[live-state][dra]") {
  Direct d;
  const std::string node = "a100-node-1";
  d.sync.SyncNodes({Node(node)});
  d.sync.SyncPods({});
  d.sync.SyncSlices({Slice()});
  d.sync.SyncClaims({Claim()});
  const std::string holder = ClaimHolderUid(Claim().metadata.uid);
  CHECK(d.state->AssignmentOf(holder) == std::make_optional(std::make_pair(node, Ids("2,3"))));
  CHECK(d.state->Snapshot(node)->free() == Ids("0,1,4,5,6,7"));
  CHECK(d.sync.stats().claims_holding_gpus == 1);
  // The extender cannot give them to a pod that asks through nvidia.com/gpu.
  CHECK(d.state->Assume(Ref("plugin-pod"), node, Ids("2")).code() == absl::StatusCode::kFailedPrecondition);
  // A pod relist (claims are not pods) leaves the claim's GPUs taken.
  d.sync.SyncPods({});
  CHECK(d.state->Snapshot(node)->free() == Ids("0,1,4,5,6,7"));

  SECTION("deleted") { d.sync.ClaimChanged(WatchEventType::kDeleted, Claim()); }
  SECTION("deallocated") {
    kube::ResourceClaim released = Claim();
    released.allocated = false;
    released.devices.clear();
    d.sync.ClaimChanged(WatchEventType::kModified, released);
  }
  SECTION("gone from a relist") { d.sync.SyncClaims({}); }
  CHECK_FALSE(d.state->AssignmentOf(holder).has_value());
  CHECK(d.state->Snapshot(node)->free().size() == 8);
  CHECK(d.sync.stats().claims_holding_gpus == 0);
}

TEST_CASE("GpuStateSync with DRA: a claim before its slice is counted, then placed when the slice arrives", "[live-state][dra]") {
  Direct d;
  const std::string node = "a100-node-1";
  d.sync.SyncClaims({Claim()});  // before the node and its slice
  d.sync.SyncNodes({Node(node)});
  const std::string holder = ClaimHolderUid(Claim().metadata.uid);
  CHECK_FALSE(d.state->AssignmentOf(holder).has_value());
  CHECK(d.state->Snapshot(node)->free().size() == 6);  // by count, placed pessimistically
  d.sync.SliceChanged(WatchEventType::kAdded, Slice());
  CHECK(d.state->AssignmentOf(holder) == std::make_optional(std::make_pair(node, Ids("2,3"))));
  CHECK(d.state->Snapshot(node)->free() == Ids("0,1,4,5,6,7"));
  // The slice gone (the driver restarting): counted again, not released.
  d.sync.SliceChanged(WatchEventType::kDeleted, Slice());
  CHECK(d.state->Snapshot(node)->free().size() == 6);
}

// A node on which only NVIDIA's DRA driver hands out GPUs: no nvidia.com/gpu in its status, its count from
// GPU feature discovery's labels.
kube::Node DraOnlyNode(const std::string& name) {
  nlohmann::json node = NodeJson(name, 0);
  node["metadata"]["labels"]["nvidia.com/gpu.count"] = "8";
  node["status"] = nlohmann::json::object();
  return codec::NodeFromJson(node).value();
}

TEST_CASE("GpuStateSync with DRA: a node whose GPUs only its slices publish offers them, whichever comes first",
          "[live-state][dra]") {
  const std::string node = "a100-node-1";  // the slice fixture's
  for (const bool node_first : {true, false}) {
    for (const bool relisted : {false, true}) {
      INFO((node_first ? "the node first" : "the slice first") << (relisted ? ", gone from a relist" : ", deleted"));
      Direct d;
      if (node_first) {
        d.sync.SyncNodes({DraOnlyNode(node)});
        REQUIRE(d.state->Snapshot(node) != nullptr);
        CHECK(d.state->Snapshot(node)->free().empty());  // nothing offered: nvidia.com/gpu is 0
        d.sync.SyncSlices({Slice()});
      } else {
        d.sync.SliceChanged(WatchEventType::kAdded, Slice());
        d.sync.SyncNodes({DraOnlyNode(node)});
      }
      REQUIRE(d.state->Snapshot(node) != nullptr);
      CHECK(d.state->Snapshot(node)->free().size() == 8);
      // A claim allocated two of them takes those two, as on a node the device plugin serves too.
      d.sync.SyncClaims({Claim()});
      CHECK(d.state->Snapshot(node)->free() == Ids("0,1,4,5,6,7"));
      // The slice gone: the node offers nothing until the driver publishes it again.
      if (relisted) {
        d.sync.SyncSlices({});
      } else {
        d.sync.SliceChanged(WatchEventType::kDeleted, Slice());
      }
      CHECK(d.state->Snapshot(node)->free().empty());
    }
  }
}

// Neither nvidia.com/gpu nor GPU feature discovery's count label: only the node's slice says how many GPUs
// it has. The node is refused until the slice comes, and modelled with the slice's count after.
TEST_CASE("GpuStateSync with DRA: a node nothing else counts the GPUs of is modelled once its slice comes",
          "[live-state][dra]") {
  const std::string node = "a100-node-1";
  nlohmann::json json = NodeJson(node, 0);
  json["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB";
  json["status"] = nlohmann::json::object();
  const kube::Node uncounted = codec::NodeFromJson(json).value();
  for (const bool node_first : {true, false}) {
    INFO((node_first ? "the node first" : "the slice first"));
    Direct d;
    if (node_first) {
      d.sync.SyncNodes({uncounted});
      CHECK(d.state->Snapshot(node) == nullptr);  // no GPU count to model
      CHECK(d.sync.stats().nodes_rejected == 1);
      d.sync.SliceChanged(WatchEventType::kAdded, Slice());
    } else {
      d.sync.SyncSlices({Slice()});
      d.sync.NodeChanged(WatchEventType::kAdded, uncounted);
    }
    REQUIRE(d.state->Snapshot(node) != nullptr);
    CHECK(d.state->Snapshot(node)->topology->gpu_count() == 8);
    CHECK(d.state->Snapshot(node)->topology_reason.find("A100") != std::string::npos);
    CHECK(d.state->Snapshot(node)->free().size() == 8);
  }
  // A node gone before its slice came is not brought back by the slice.
  Direct d;
  d.sync.SyncNodes({uncounted});
  d.sync.NodeChanged(WatchEventType::kDeleted, uncounted);
  d.sync.SliceChanged(WatchEventType::kAdded, Slice());
  CHECK(d.state->Snapshot(node) == nullptr);
}

TEST_CASE("GpuStateSync with DRA: a slice event re-resolves the claims of the pools it changed, old and new",
          "[live-state][dra]") {
  Direct d;
  const std::string node = "a100-node-1";
  d.sync.SyncNodes({Node(node)});
  d.sync.SyncSlices({Slice()});
  d.sync.SyncClaims({Claim()});
  const std::string holder = ClaimHolderUid(Claim().metadata.uid);
  REQUIRE(d.state->AssignmentOf(holder) == std::make_optional(std::make_pair(node, Ids("2,3"))));
  // The driver republishes the slice under a new pool: the claim's pool has no devices any more, so the
  // claim is counted by its count again, not left on ids no slice vouches for.
  kube::ResourceSlice moved = Slice();
  moved.pool = "a100-node-1-v2";
  d.sync.SliceChanged(WatchEventType::kModified, moved);
  CHECK_FALSE(d.state->AssignmentOf(holder).has_value());
  CHECK(d.state->Snapshot(node)->free().size() == 6);
  // A slice of another pool leaves it as it is.
  kube::ResourceSlice other = Slice();
  other.metadata.name = "other-slice";
  other.pool = "other-pool";
  d.sync.SliceChanged(WatchEventType::kAdded, other);
  CHECK(d.state->Snapshot(node)->free().size() == 6);
  // The pool back: placed again.
  d.sync.SliceChanged(WatchEventType::kModified, Slice());
  CHECK(d.state->AssignmentOf(holder) == std::make_optional(std::make_pair(node, Ids("2,3"))));
}

TEST_CASE("GpuStateSync with DRA: every claim, allocated or not, and each node's GPUs are there to read",
          "[live-state][dra]") {
  Direct d;
  const kube::ResourceClaim pending =
      codec::ResourceClaimFromJson(DraFixture("resourceclaim-v1-pending.json")).value();
  d.sync.SyncSlices({Slice()});
  d.sync.SyncClaims({pending});
  // A pending pod's claim is not allocated: it holds nothing, but the extender reads what it asks.
  CHECK(d.sync.stats().claims_holding_gpus == 0);
  REQUIRE(d.sync.Claim("ml", "infer-1-gpus-p2x8w").has_value());
  CHECK(d.sync.Claim("ml", "infer-1-gpus-p2x8w")->requests.size() == 1);
  CHECK_FALSE(d.sync.Claim("other", "infer-1-gpus-p2x8w").has_value());
  d.sync.ClaimChanged(WatchEventType::kAdded, Claim());
  CHECK(d.sync.Claim("ml", "trainer-0-gpus-7hq2d").has_value());
  d.sync.ClaimChanged(WatchEventType::kDeleted, pending);
  CHECK_FALSE(d.sync.Claim("ml", "infer-1-gpus-p2x8w").has_value());
  d.sync.SyncClaims({});
  CHECK_FALSE(d.sync.Claim("ml", "trainer-0-gpus-7hq2d").has_value());

  const std::vector<decision::SliceGpu> gpus = d.sync.NodeGpus("a100-node-1");
  REQUIRE(gpus.size() == 8);
  CHECK(gpus[3].device.attributes.at("resource.kubernetes.io/pcieRoot").string_value == "pci0000:10");
  CHECK(d.sync.NodeGpus("elsewhere").empty());
  CHECK(d.sync.gpu_classes().device_classes == std::vector<std::string>{"gpu.nvidia.com"});
}

// Pod server-1 asking `nvidia.com/gpu: 2`, bound to a100-node-1, with the claim kube-scheduler made for it
// named in its status as mapping `resource` (KEP-5004). The claim fixture is reserved for it.
kube::Pod ExtendedResourcePod(const std::string& resource = "nvidia.com/gpu") {
  nlohmann::json pod = GpuPodJson("server-1", "a100-node-1", 2);
  pod["status"]["extendedResourceClaimStatus"] = {
      {"resourceClaimName", "server-1-extended-resources-x7k2p"},
      {"requestMappings",
       {{{"containerName", pod["spec"]["containers"][0]["name"]},
         {"resourceName", resource},
         {"requestName", "container-0-request-0"}}}}};
  return Pod(pod);
}
kube::ResourceClaim ExtendedResourceClaim() {
  return codec::ResourceClaimFromJson(DraFixture("resourceclaim-v1-extended-resource.json")).value();
}

TEST_CASE("GpuStateSync with DRA: a pod whose nvidia.com/gpu DRA serves is counted once, by its claim, in any order",
          "[live-state][dra]") {
  const std::string node = "a100-node-1";
  const std::string claim_holder = ClaimHolderUid(ExtendedResourceClaim().metadata.uid);
  const std::vector<std::string> orders = {"node, pod, claim", "node, claim, pod", "pod, claim, node",
                                           "claim, pod, node", "bind assumed, claim, pod", "bind assumed, pod, claim"};
  for (const std::string& order : orders) {
    INFO(order);
    Direct d;
    d.sync.SyncSlices({Slice()});
    d.sync.SyncPods({});
    const bool node_last = absl::EndsWith(order, "node");
    if (!node_last) d.sync.SyncNodes({DraOnlyNode(node)});
    if (absl::StartsWith(order, "bind assumed")) {
      // The extender chose GPUs at bind; the DRA plugin's allocator chose others.
      REQUIRE_OK(d.state->Assume(Ref("server-1"), node, Ids("0,1")));
    }
    const bool pod_first = order.find("pod") < order.find("claim");
    auto pod = [&] { d.sync.PodChanged(WatchEventType::kAdded, ExtendedResourcePod()); };
    auto claim = [&] { d.sync.ClaimChanged(WatchEventType::kAdded, ExtendedResourceClaim()); };
    if (pod_first) {
      pod();
      if (!node_last) CHECK(d.state->Snapshot(node)->free().size() == 6);  // by its count until the claim comes
      claim();
    } else {
      claim();
      pod();
    }
    if (node_last) d.sync.SyncNodes({DraOnlyNode(node)});
    CHECK(d.state->Snapshot(node)->free() == Ids("0,1,2,3,6,7"));
    CHECK(d.state->AssignmentOf(claim_holder) == std::make_optional(std::make_pair(node, Ids("4,5"))));
    CHECK_FALSE(d.state->AssignmentOf("uid-server-1").has_value());
    // A later event of the pod changes nothing.
    d.sync.PodChanged(WatchEventType::kModified, ExtendedResourcePod());
    CHECK(d.state->Snapshot(node)->free() == Ids("0,1,2,3,6,7"));

    SECTION("the claim gone while the pod runs: the pod holds its count again") {
      d.sync.ClaimChanged(WatchEventType::kDeleted, ExtendedResourceClaim());
      CHECK(d.state->Snapshot(node)->free().size() == 6);
    }
    SECTION("the claim gone from a relist") {
      d.sync.SyncClaims({});
      CHECK(d.state->Snapshot(node)->free().size() == 6);
    }
    SECTION("the pod deleted, then its claim") {
      d.sync.PodChanged(WatchEventType::kDeleted, ExtendedResourcePod());
      CHECK(d.state->Snapshot(node)->free() == Ids("0,1,2,3,6,7"));
      d.sync.ClaimChanged(WatchEventType::kDeleted, ExtendedResourceClaim());
      CHECK(d.state->Snapshot(node)->free().size() == 8);
    }
  }
}

TEST_CASE("GpuStateSync with DRA: a pod holds its own GPUs while no claim is seen serving them", "[live-state][dra]") {
  const std::string node = "a100-node-1";
  Direct d;
  d.sync.SyncSlices({Slice()});
  d.sync.SyncNodes({Node(node)});
  SECTION("its claim never seen (the extender reads no claims)") {
    d.sync.SyncPods({ExtendedResourcePod()});
    CHECK(d.state->Snapshot(node)->free().size() == 6);
  }
  SECTION("the claim serves another extended resource: the device plugin serves its GPUs") {
    d.sync.SyncPods({ExtendedResourcePod("example.com/nic")});
    d.sync.SyncClaims({ExtendedResourceClaim()});
    CHECK(d.state->Snapshot(node)->free().size() == 4);  // the pod's two and the claim's two
  }
}

}  // namespace
}  // namespace topofit::kubeclient
