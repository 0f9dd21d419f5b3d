// The diagnosis benchmark's faults (docs/mcp.md, "Diagnosis benchmark"): pods whose trouble has one known
// cause, each made by the code that decides it in a cluster — the extender's filter and bind (in-process, as
// its tests run it), the expander's scale-up choice, and the restart collector reading pods, events, logs
// and nodes from the fake API server — into a decision database through the real store. Writes
// DIR/decisions.db and DIR/faults.json: [{id, fault, pod, expected}], where `expected` is the cause a
// diagnosis must name first. tests/mcp/diagnosis.mjs asks topofit's MCP server about each.
//
//   diagnosis_faults DIR

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "codec/node_topology.h"
#include "decision/scale_up_choice.h"
#include "history/from_decisions.h"
#include "history/store.h"
#include "kubeclient/provisioner.h"
#include "kubeclient/restart_collector.h"
#include "tests/decision/p4d_scale_up.h"
#include "tests/history/memory_recorder.h"
#include "tests/kube/builders.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/scheduler/extender_fixture.h"

namespace topofit::diagnosis {
namespace {

using decision::testing::kIntentSeconds;
using decision::testing::P4d;
using decision::testing::P4dIntentFor;
using kube::testing::MakeNode;
using kube::testing::MakePod;
using nlohmann::json;

// The faults made so far and the records that show them.
class Bench {
 public:
  void Expect(const std::string& fault, const std::string& pod, const std::string& expected) {
    faults_.push_back({{"id", faults_.size() + 1}, {"fault", fault}, {"pod", pod}, {"expected", expected}});
  }
  void Keep(const history::testing::MemoryRecorder& recorder) {
    for (history::Record& r : recorder.records()) records_.push_back(std::move(r));
  }
  const std::vector<history::Record>& records() const { return records_; }
  const json& faults() const { return faults_; }

 private:
  std::vector<history::Record> records_;
  json faults_ = json::array();
};

// One cluster as the extender sees it, recording what it decides; each fault gets its own.
struct Cluster : scheduler::testing::ExtenderFixture {
  explicit Cluster(scheduler::CapacityRequests* capacity_requests = nullptr) : ExtenderFixture(capacity_requests) {
    clock.Set(absl::FromUnixSeconds(kIntentSeconds));
    extender.RecordDecisionsTo(&recorder);
  }
  void Node(const kube::Node& node) {
    if (!state->UpsertNode(node).ok()) throw std::runtime_error("node " + node.metadata.name + " refused");
  }
  void Filter(const kube::Pod& pod, std::vector<std::string> nodes) {
    kube.PutPod(pod);
    if (!extender.Filter({pod, std::nullopt, std::move(nodes)}).ok()) throw std::runtime_error("filter failed");
  }
  std::string Bind(const kube::Pod& pod, const std::string& node) {
    return extender.Bind({pod.metadata.name, pod.metadata.namespace_name, pod.metadata.uid, node}).value_or("error");
  }
  history::testing::MemoryRecorder recorder;
};

kube::testing::PodBuilder Pod(const std::string& ns, const std::string& name, int gpus) {
  kube::testing::PodBuilder pod = MakePod();
  pod.namespaceName(ns).name(name).uid(absl::StrCat("uid-", ns, "-", name)).gpus(gpus);
  return pod;
}
std::string Key(const kube::Pod& pod) { return absl::StrCat(pod.metadata.namespace_name, "/", pod.metadata.name); }

kube::Node G5(const std::string& name) {
  return MakeNode().name(name).label("node.kubernetes.io/instance-type", "g5.48xlarge").gpus(8);
}
// A GB200 compute tray (4 GPUs) of NVLink clique `clique`.
kube::Node Tray(const std::string& name, const std::string& clique) {
  return MakeNode().name(name).label("nvidia.com/gpu.product", "NVIDIA-GB200").label("nvidia.com/gpu.clique", clique).gpus(4);
}

// A pod that requires NVLink offered only PCIe nodes.
void RequiredNvLinkOnPcie(Bench& bench) {
  const std::vector<std::pair<int, int>> variants = {{8, 1}, {4, 2}, {2, 3}, {8, 3}};  // GPUs, g5 nodes
  for (const auto& [gpus, count] : variants) {
    Cluster c;
    std::vector<std::string> names;
    for (int i = 0; i < count; ++i) {
      names.push_back(absl::StrCat("g5-", i));
      c.Node(G5(names.back()));
    }
    const kube::Pod pod = Pod("topology", absl::StrCat("nv-", gpus, "-on-", count), gpus)
                              .annotation("topofit.io/min-link", "NV").annotation("topofit.io/topology-policy", "required");
    c.Filter(pod, names);
    bench.Keep(c.recorder);
    bench.Expect("requires NVLink, only PCIe nodes offered", Key(pod), "min-link");
  }
}

void BandwidthAboveEveryNode(Bench& bench) {
  for (int gpus : {2, 4}) {
    Cluster c;
    c.Node(G5("g5-0"));
    const kube::Pod pod = Pod("topology", absl::StrCat("bw-", gpus), gpus)
                              .annotation("topofit.io/min-bandwidth", "200GB/s").annotation("topofit.io/topology-policy", "required");
    c.Filter(pod, {"g5-0"});
    bench.Keep(c.recorder);
    bench.Expect("requires more GPU-to-GPU bandwidth than any node gives", Key(pod), "min-bandwidth");
  }
}

void LargerThanAnyNode(Bench& bench) {
  for (int gpus : {16, 12}) {
    Cluster c;
    c.Node(P4d("p4d-0", 0));
    c.Node(G5("g5-0"));
    const kube::Pod pod = Pod("size", absl::StrCat("gpus-", gpus), gpus);
    c.Filter(pod, {"p4d-0", "g5-0"});
    bench.Keep(c.recorder);
    bench.Expect("asks for more GPUs than any node has", Key(pod), "node-size");
  }
}

void EveryGpuTaken(Bench& bench) {
  for (int busy_nodes : {1, 2, 4}) {
    Cluster c;
    std::vector<std::string> names;
    for (int i = 0; i < busy_nodes; ++i) {
      names.push_back(absl::StrCat("p4d-", i));
      c.Node(P4d(names.back(), 0));
      if (!c.state->Assume({absl::StrCat("uid-busy-", i), "ml", absl::StrCat("busy-", i)}, names.back(),
                           topology::GpuSet::FirstN(6)).ok()) {
        throw std::runtime_error("assume failed");
      }
    }
    const kube::Pod pod = Pod("full", absl::StrCat("on-", busy_nodes), 4);
    c.Filter(pod, names);
    bench.Keep(c.recorder);
    bench.Expect("every offered node's GPUs are taken", Key(pod), "gpu-count");
  }
}

// The expander scaled p4d-group up for a trainer; another pod is refused the new node's held GPUs.
void HeldForAnothersScaleUp(Bench& bench) {
  for (int gpus : {1, 4}) {
    Cluster c;
    const kube::Pod trainer = MakePod().name("trainer").gpus(8).annotation("topofit.io/min-link", "NV")
                                  .annotation("topofit.io/topology-policy", "required");
    c.Filter(trainer, {});
    c.ledger->RecordIntent(P4dIntentFor({{"uid-trainer", 8}}));
    c.clock.Advance(absl::Minutes(5));
    c.Node(P4d("p4d-new", kIntentSeconds + 240));
    const kube::Pod pod = Pod("holds", absl::StrCat("web-", gpus), gpus).created(kIntentSeconds);
    c.Filter(pod, {"p4d-new"});
    bench.Keep(c.recorder);
    bench.Expect("the only node's GPUs are held for another pod's scale-up", Key(pod), "held-for-scale-up");
  }
}

// A pod preferring NVLink whose NVLink node is booting is kept off the PCIe node.
void WaitingForItsScaleUp(Bench& bench) {
  for (int gpus : {2, 4}) {
    Cluster c;
    c.Node(G5("g5-1"));
    const kube::Pod pod = Pod("holds", absl::StrCat("prefers-nv-", gpus), gpus).annotation("topofit.io/min-link", "NV");
    c.ledger->RecordIntent(P4dIntentFor({{pod.metadata.uid, gpus}}));
    c.Filter(pod, {"g5-1"});
    bench.Keep(c.recorder);
    bench.Expect("waits for the NVLink node booting for it", Key(pod), "waiting-for-capacity");
  }
}

// A long trainer preferring NVLink is refused a PCIe node while NVLink capacity is worth asking for.
void AskingForBetterCapacity(Bench& bench) {
  for (const bool busy_p4d : {true, false}) {
    Cluster c;
    c.Node(G5("g5-1"));
    if (busy_p4d) {
      c.Node(P4d("p4d-busy", 0));
      if (!c.state->Assume({"uid-busy", "ml", "busy"}, "p4d-busy", topology::GpuSet::FirstN(8)).ok()) {
        throw std::runtime_error("assume failed");
      }
    } else {
      c.ledger->RecordNodeGroups({{"p4d-group", P4d("template-node-for-p4d-group", 0)}}, /*trusted=*/true);
    }
    const kube::Pod pod = Pod("holds", busy_p4d ? "trainer-busy-p4d" : "trainer-p4d-at-zero", 4)
                              .annotation("topofit.io/min-link", "NV").annotation("topofit.io/expected-runtime", "10h");
    c.Filter(pod, {"g5-1"});
    bench.Keep(c.recorder);
    bench.Expect("refused PCIe while NVLink capacity is asked for", Key(pod), "asking-for-capacity");
  }
}

// Nodes whose GPU topology nothing tells: no instance type topofit knows, no GPU Feature Discovery labels,
// no topofit.io/topology annotation from the node agent.
void NodeWithoutTopology(Bench& bench) {
  for (int gpus : {2, 8}) {
    Cluster c;
    c.Node(MakeNode().name("bare-0").gpus(8));
    const kube::Pod pod = Pod("labels", absl::StrCat("nv-", gpus), gpus)
                              .annotation("topofit.io/min-link", "NV").annotation("topofit.io/topology-policy", "required");
    c.Filter(pod, {"bare-0"});
    bench.Keep(c.recorder);
    bench.Expect("the node has no GFD labels and no topology annotation", Key(pod), "topology-unknown");
  }
}

void MalformedAnnotations(Bench& bench) {
  const std::vector<std::pair<std::string, std::string>> variants = {{"topofit.io/min-link", "fast"},
                                                                     {"topofit.io/min-bandwidth", "200"}};
  for (size_t i = 0; i < variants.size(); ++i) {
    Cluster c;
    c.Node(P4d("p4d-0", 0));
    const kube::Pod pod = Pod("annotations", absl::StrCat("bad-", i), 4).annotation(variants[i].first, variants[i].second);
    c.Filter(pod, {"p4d-0"});
    bench.Keep(c.recorder);
    bench.Expect("a topofit.io annotation that does not parse", Key(pod), "invalid-pod");
  }
}

kube::testing::PodBuilder Member(const std::string& gang, int i, int size) {
  return Pod("gangs", absl::StrCat(gang, "-", i), 4)
      .annotation("topofit.io/gang", gang)
      .annotation("topofit.io/gang-size", std::to_string(size))
      .annotation("topofit.io/gang-required-topology", "domain");
}

// Two NVLink domains of 2 and 4 trays (4 GPUs each).
struct GangCluster : Cluster {
  GangCluster() {
    for (const char* name : {"small-0", "small-1"}) Node(Tray(name, "uuid.small"));
    for (const char* name : {"big-0", "big-1", "big-2", "big-3"}) Node(Tray(name, "uuid.big"));
  }
  std::vector<std::string> trays{"small-0", "small-1", "big-0", "big-1", "big-2", "big-3"};
};

void GangWithoutADomain(Bench& bench) {
  for (int size : {5, 8}) {
    GangCluster c;
    const kube::Pod first = Member(absl::StrCat("wide-", size), 0, size);
    c.Filter(first, c.trays);
    bench.Keep(c.recorder);
    bench.Expect("a gang larger than any NVLink domain offered", Key(first), "gang-no-room");
  }
}

void GangMemberAhead(Bench& bench) {
  for (int size : {3, 4}) {
    GangCluster c;
    const kube::Pod first = Member(absl::StrCat("train-", size), 0, size);
    c.Filter(first, c.trays);
    c.Bind(first, "big-0");  // held: the other members have not come
    bench.Keep(c.recorder);
    bench.Expect("a gang member waits for the rest of its gang", Key(first), "gang-waiting");
  }
}

void BindRefusedByApiServer(Bench& bench) {
  for (const char* why : {"pods \"x\" is already assigned to node \"p4d-9\"", "etcdserver: request timed out"}) {
    Cluster c;
    c.Node(P4d("p4d-0", 0));
    const kube::Pod pod = Pod("binds", absl::StrCat("bind-", bench.faults().size()), 2);
    c.Filter(pod, {"p4d-0"});
    c.kube.FailBindsWith(absl::UnavailableError(why));
    c.Bind(pod, "p4d-0");
    bench.Keep(c.recorder);
    bench.Expect("the API server refused the Binding", Key(pod), "bind-failed");
  }
}

// The extender refuses a pod that requires NVLink on the PCIe nodes there are, and its preference reaches
// the ledger; cluster-autoscaler then offers only groups whose new nodes would refuse it too: the expander
// vetoes the scale-up.
void EveryOptionStrands(Bench& bench) {
  codec::TopologyResolver topologies;
  for (const char* name : {"trainer-a", "trainer-b"}) {
    Cluster c;
    c.Node(G5("g5-0"));
    const kube::Pod pod = Pod("scale-up", name, 8).annotation("topofit.io/min-link", "NV")
                              .annotation("topofit.io/topology-policy", "required");
    c.Filter(pod, {"g5-0"});
    c.clock.Advance(absl::Seconds(10));  // cluster-autoscaler's next loop
    decision::RankInput input;
    input.now = c.clock.Now();
    input.preferences = c.ledger->Preferences();
    input.templates["g5-group"] = kube::SharedTemplate(G5("template-node-for-g5-group"));
    input.templates["g4dn-group"] = kube::SharedTemplate(MakeNode().name("template-node-for-g4dn-group")
                                        .label("node.kubernetes.io/instance-type", "g4dn.12xlarge").gpus(4));
    input.options = {{"g5-group", 1, {pod}}, {"g4dn-group", 2, {pod}}};
    const decision::ScaleUpChoice choice = decision::ChooseScaleUp(input, topologies);
    for (history::Record& r : history::ScaleUpRecords(input.now, input, choice)) c.recorder.Record(std::move(r));
    bench.Keep(c.recorder);
    bench.Expect("no node group cluster-autoscaler offers can take it", Key(pod), "vetoed");
  }
}

// The extender asks cluster-autoscaler for capacity (a ProvisioningRequest, through the real provisioner
// against the fake API server) for a pod requiring NVLink that the PCIe nodes refuse; cluster-autoscaler
// answers with `conditions` on the request, which the provisioner reads when kube-scheduler's retry asks again.
class CapacityAnswers {
 public:
  explicit CapacityAnswers(Bench& bench) : bench_(bench) {}

  void Answer(const std::string& fault, const std::string& name, const json& conditions, const std::string& expected) {
    spdlog::logger log{"provisioner", std::make_shared<spdlog::sinks::null_sink_mt>()};
    server::FakeClock clock;
    clock.Set(absl::FromUnixSeconds(kIntentSeconds));
    kubeclient::Provisioner provisioner(kube_, log, clock);
    Cluster c(&provisioner);
    provisioner.RecordDecisionsTo(&c.recorder);
    c.Node(G5("g5-0"));
    const kube::Pod pod = Pod("capacity", name, 8).annotation("topofit.io/min-link", "NV")
                              .annotation("topofit.io/topology-policy", "required");
    json object = kubeclient::testing::PodJson("capacity", name, "", "topofit");
    object["metadata"]["uid"] = pod.metadata.uid;
    object["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", "8"}}}};
    api_.Upsert(kubeclient::testing::Resource::kPods, object);

    c.Filter(pod, {"g5-0"});
    Await([&] { return provisioner.stats().requested == 1; }, "the ProvisioningRequest");
    const std::string path = absl::StrCat("/apis/autoscaling.x-k8s.io/v1/namespaces/capacity/provisioningrequests/topofit-", name);
    json request = api_.StoredObject(path);
    request["status"] = {{"conditions", conditions}};
    api_.PutStoredObject(path, request);
    // kube-scheduler retries the pod; the provisioner reads the request a minute on.
    c.clock.Advance(kubeclient::kStatusCheckInterval);
    clock.Advance(kubeclient::kStatusCheckInterval);
    c.Filter(pod, {"g5-0"});
    Await([&] {
      const std::vector<history::Record> records = c.recorder.records();
      return std::any_of(records.begin(), records.end(),
                         [](const history::Record& r) { return r.kind == history::Kind::kCapacityStatus; });
    }, "the capacity status");
    provisioner.Stop();
    bench_.Keep(c.recorder);
    bench_.Expect(fault, Key(pod), expected);
  }

 private:
  template <typename Predicate>
  static void Await(Predicate done, const std::string& what) {
    for (int i = 0; i < 3000 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!done()) throw std::runtime_error("timed out waiting for " + what);
  }
  Bench& bench_;
  std::unique_ptr<topofit::testing::TestCerts> certs_ = topofit::testing::TestCerts::Create().value();
  kubeclient::testing::FakeApiServer api_{*certs_};
  std::unique_ptr<kubeclient::RestClient> rest_ = kubeclient::testing::DirectClientFor(api_, *certs_);
  kubeclient::KubeApi kube_{*rest_};
};

void CapacityNeverCame(Bench& bench) {
  CapacityAnswers ca(bench);
  const json not_found = {{{"type", "Accepted"}, {"status", "True"}},
                          {{"type", "Provisioned"}, {"status", "False"}, {"reason", "CapacityIsNotFound"},
                           {"message", "Capacity is not found, CA will try to find it later."}}};
  ca.Answer("the only NVLink node group is at its maximum size", "max-size-0", not_found, "capacity-not-found");
  ca.Answer("no node group cluster-autoscaler may grow fits the pod", "no-group-0", not_found, "capacity-not-found");
  ca.Answer("cluster-autoscaler gave up on the request", "failed-0",
            {{{"type", "Failed"}, {"status", "True"}, {"reason", "CapacityIsNotFound"},
              {"message", "CA could not find requested capacity"}}},
            "capacity-failed");
  const json expired = {{{"type", "Provisioned"}, {"status", "True"}, {"reason", "CapacityIsProvisioned"}},
                        {{"type", "BookingExpired"}, {"status", "True"}}};
  ca.Answer("the new node never became ready for it within the booking", "expired-0", expired, "booking-expired");
  ca.Answer("the capacity came and went unused", "expired-1", expired, "booking-expired");
}

// Pods topofit never judged: kube-scheduler could not reach the extender, or another scheduler owns them.
void NeverReachedTopofit(Bench& bench) {
  bench.Expect("the extender was unreachable when kube-scheduler filtered it", "unreachable/trainer-0", "no-record");
  bench.Expect("spec.schedulerName names another scheduler", "default-scheduler/infer-0", "no-record");
}

// Restarts, through the restart collector reading the fake API server as it reads a cluster.
class Restarts {
 public:
  explicit Restarts(Bench& bench) : bench_(bench) {}

  // A GPU pod bound to `node` holding GPUs 0,1 whose container `main` restarted once: `ended` is its
  // lastState.terminated, `waiting` its state.waiting reason.
  void Restart(const std::string& fault, const std::string& name, const json& ended, const std::string& expected,
               const std::string& node = "gpu-1", const std::vector<std::string>& warnings = {},
               const std::string& disruption = "", const std::string& waiting = "CrashLoopBackOff") {
    const std::string ns = "restarts";
    json pod = kubeclient::testing::PodJson(ns, name, node, "topofit");
    pod["metadata"]["uid"] = absl::StrCat("uid-", ns, "-", name);
    pod["metadata"]["annotations"] = {{"topofit.io/gpu-ids", "0,1"}};
    pod["spec"]["containers"][0]["name"] = "main";
    pod["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", "2"}}}};
    pod["status"]["containerStatuses"] = json::array({{{"name", "main"}, {"restartCount", 0}}});
    before_.push_back(pod);
    for (size_t i = 0; i < warnings.size(); ++i) {
      const std::string event = absl::StrCat(name, ".", i);
      const size_t colon = warnings[i].find(": ");
      api_.PutStoredObject(absl::StrCat("/api/v1/namespaces/", ns, "/events/", event),
                           {{"metadata", {{"name", event}, {"namespace", ns}}},
                            {"involvedObject", {{"kind", "Pod"}, {"uid", pod["metadata"]["uid"]}, {"name", name}}},
                            {"type", "Warning"}, {"reason", warnings[i].substr(0, colon)},
                            {"message", warnings[i].substr(colon + 2)}});
    }
    pod["status"]["containerStatuses"][0]["restartCount"] = 1;
    pod["status"]["containerStatuses"][0]["lastState"] = {{"terminated", ended}};
    pod["status"]["containerStatuses"][0]["state"] = {{"waiting", {{"reason", waiting}}}};
    if (!disruption.empty()) {
      pod["status"]["conditions"] = json::array({{{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", disruption}}});
    }
    after_.push_back(pod);
    bench_.Expect(fault, absl::StrCat(ns, "/", name), expected);
  }
  void UnhealthyNode(const std::string& node, const std::string& gpus) {
    json object = kubeclient::testing::NodeJson(node, 8);
    object["metadata"]["annotations"] = {{"topofit.io/unhealthy-gpus", gpus}};
    api_.Upsert(kubeclient::testing::Resource::kNodes, object);
  }
  // Runs the collector over every pod: first seen without restarts, then restarted.
  void Collect() {
    kubeclient::KubeApi kube(*rest_);
    history::testing::MemoryRecorder recorder;
    server::FakeClock clock;
    clock.Set(absl::FromUnixSeconds(kIntentSeconds));
    server::MetricsRegistry registry;
    spdlog::logger log{"restarts", std::make_shared<spdlog::sinks::null_sink_mt>()};
    kubeclient::RestartCollector collector(kube, recorder, clock, log, registry);
    kubeclient::ListWatcher::Sink sink = collector.Sink();
    sink.List(before_);
    for (const json& pod : after_) sink.on_event(kubeclient::WatchEventType::kModified, pod);
    if (!collector.WaitIdle(absl::Seconds(30))) throw std::runtime_error("the restart collector did not settle");
    bench_.Keep(recorder);
  }

 private:
  Bench& bench_;
  std::unique_ptr<topofit::testing::TestCerts> certs_ = topofit::testing::TestCerts::Create().value();
  kubeclient::testing::FakeApiServer api_{*certs_};
  std::unique_ptr<kubeclient::RestClient> rest_ = kubeclient::testing::DirectClientFor(api_, *certs_);
  std::vector<json> before_, after_;
};

void RestartFaults(Bench& bench) {
  Restarts r(bench);
  const auto ended = [](int exit_code, const std::string& reason, const std::string& message = "", int signal = 0) {
    json out = {{"exitCode", exit_code}, {"reason", reason}};
    if (!message.empty()) out["message"] = message;
    if (signal != 0) out["signal"] = signal;
    return out;
  };
  for (const char* name : {"oom-0", "oom-1", "oom-2"}) {
    r.Restart("the container exceeded its memory limit", name, ended(137, "OOMKilled", "", 9), "oom");
  }
  r.Restart("CUDA ran out of GPU memory", "gpu-oom-0",
            ended(1, "Error", "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"), "gpu-oom");
  r.Restart("CUDA ran out of GPU memory (the event says so)", "gpu-oom-1", ended(1, "Error"), "gpu-oom", "gpu-1",
            {"BackOff: cudaErrorMemoryAllocation: out of memory"});
  r.Restart("a hardware Xid on the pod's GPU (termination message)", "xid-79",
            ended(1, "Error", "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."), "gpu-fault");
  r.Restart("a hardware Xid on the pod's GPU (event)", "xid-48", ended(134, "Error", "", 6), "gpu-fault", "gpu-1",
            {"GpuXid: Xid 48: double-bit ECC error"});
  r.Restart("a hardware Xid on the pod's GPU (row remapping)", "xid-94",
            ended(1, "Error", "Xid 94: contained ECC error"), "gpu-fault");
  r.UnhealthyNode("gpu-bad-0", "1");
  r.UnhealthyNode("gpu-bad-1", "0,6");
  r.Restart("a GPU the node agent reports unhealthy", "unhealthy-0", ended(1, "Error"), "gpu-fault", "gpu-bad-0");
  r.Restart("a GPU the node agent reports unhealthy", "unhealthy-1", ended(139, "Error", "", 11), "gpu-fault", "gpu-bad-1");
  r.Restart("preempted by the scheduler", "evicted-0", ended(143, "Error", "", 15), "eviction", "gpu-1", {},
            "PreemptionByScheduler");
  r.Restart("evicted through the Eviction API (a drain)", "evicted-1", ended(143, "Error", "", 15), "eviction", "gpu-1", {},
            "EvictionByEvictionAPI");
  r.Restart("the container's command does not exist", "start-error-0",
            ended(128, "StartError", "exec: \"python\": executable file not found in $PATH"), "image-or-config");
  r.Restart("a ConfigMap the container needs is missing", "config-0", ended(1, "Error"), "image-or-config", "gpu-1", {},
            "", "CreateContainerConfigError");
  r.Restart("failed liveness probes", "liveness-0", ended(137, "Error", "", 9), "liveness-probe", "gpu-1",
            {"Unhealthy: Liveness probe failed: HTTP probe failed with statuscode: 500"});
  r.Restart("failed liveness probes (exec probe)", "liveness-1", ended(137, "Error", "", 9), "liveness-probe", "gpu-1",
            {"Unhealthy: Liveness probe failed: command timed out"});
  r.Restart("the application exited 1", "app-0", ended(1, "Error", "Traceback (most recent call last): KeyError"),
            "application-error");
  r.Restart("the application was killed by a segfault", "app-1", ended(139, "Error", "", 11), "application-error");
  r.Restart("an Xid the application causes (13, graphics engine exception)", "app-xid-13",
            ended(1, "Error", "NVRM: Xid (PCI:0000:3b:00): 13, pid=77, Graphics Exception"), "application-error");
  r.Restart("the container exited 0 and restartPolicy Always started it again", "completed-0", ended(0, "Completed"),
            "completed");
  r.Collect();
}

}  // namespace
}  // namespace topofit::diagnosis

int main(int argc, char** argv) {
  using namespace topofit::diagnosis;
  if (argc != 2) {
    std::cerr << "usage: diagnosis_faults DIR (writes DIR/decisions.db and DIR/faults.json)\n";
    return 2;
  }
  const std::string dir = argv[1];
  try {
    Bench bench;
    RequiredNvLinkOnPcie(bench);
    BandwidthAboveEveryNode(bench);
    LargerThanAnyNode(bench);
    EveryGpuTaken(bench);
    HeldForAnothersScaleUp(bench);
    WaitingForItsScaleUp(bench);
    AskingForBetterCapacity(bench);
    NodeWithoutTopology(bench);
    MalformedAnnotations(bench);
    GangWithoutADomain(bench);
    GangMemberAhead(bench);
    BindRefusedByApiServer(bench);
    EveryOptionStrands(bench);
    CapacityNeverCame(bench);
    NeverReachedTopofit(bench);
    RestartFaults(bench);

    auto store = topofit::history::DecisionStore::Open(dir + "/decisions.db");
    if (!store.ok()) throw std::runtime_error(std::string(store.status().message()));
    if (absl::Status written = (*store)->Append(bench.records()); !written.ok()) {
      throw std::runtime_error(std::string(written.message()));
    }
    std::ofstream(dir + "/faults.json") << bench.faults().dump(2) << "\n";
    std::cout << bench.faults().size() << " faults, " << bench.records().size() << " decision records in " << dir << "\n";
  } catch (const std::exception& e) {
    std::cerr << "diagnosis_faults: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
