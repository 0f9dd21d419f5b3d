#include "scheduler/extender_http.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codec/kube_json.h"
#include "server/ops_endpoints.h"
#include "tests/codec/hostile_json.h"
#include "tests/kube/builders.h"
#include "tests/kubeclient/eventually.h"
#include "tests/scheduler/extender_fixture.h"

namespace topofit::scheduler {
namespace {

using nlohmann::json;

constexpr char kToken[] = "s3cret-admin-token";

std::filesystem::path FixtureDir() {
  const char* shared = std::getenv("TOPOFIT_SHARED_DIR");
  return std::filesystem::path(shared != nullptr ? shared : TOPOFIT_DEFAULT_SHARED_DIR) / "fixtures" / "k8s" / "HEAD";
}

std::optional<json> ReadFixture(const std::string& name) {
  std::ifstream file(FixtureDir() / name);
  if (!file) return std::nullopt;
  return json::parse(file);
}

// The upstream round-trip Pod fixture with GPUs and topofit annotations merged in.
json GpuPod(const json& fixture, const std::string& name, int gpus, bool nv_required) {
  json pod = fixture;
  pod["metadata"]["name"] = name;
  pod["metadata"]["namespace"] = "ml";
  pod["metadata"]["uid"] = "uid-" + name;
  pod["spec"]["schedulerName"] = "topofit";
  pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = std::to_string(gpus);
  if (nv_required) {
    pod["metadata"]["annotations"]["topofit.io/min-link"] = "NV";
    pod["metadata"]["annotations"]["topofit.io/topology-policy"] = "required";
  }
  return pod;
}

// The upstream Node fixture turned into a GPU node of a catalog shape.
json GpuNode(const json& fixture, const std::string& name, const std::string& instance_type, int gpus) {
  json node = fixture;
  node["metadata"]["name"] = name;
  node["metadata"]["resourceVersion"] = "1";
  node["metadata"]["labels"]["node.kubernetes.io/instance-type"] = instance_type;
  node["status"]["allocatable"]["nvidia.com/gpu"] = std::to_string(gpus);
  return node;
}

// Sends `request` on a fresh loopback connection and returns what the server answers before closing.
std::string RawExchange(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  REQUIRE(::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(request.size()));
  std::string reply;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) reply.append(buffer, static_cast<size_t>(n));
  ::close(fd);
  return reply;
}

struct Harness : testing::ExtenderFixture {
  std::unique_ptr<server::HttpServer> server;
  std::unique_ptr<httplib::Client> client;
  int port = 0;

  explicit Harness(int io_threads = server::HttpServerOptions().threads) {
    server::HttpServerOptions options;
    options.threads = io_threads;
    options.address = "127.0.0.1";
    options.max_body_bytes = 8 << 20;
    options.name = "extender";
    server = *server::HttpServer::Create(options, registry);
    RegisterExtenderRoutes(*server, extender, kToken);
    RegisterPreferencesRoute(*server, *ledger, kToken);
    server::RegisterOpsEndpoints(*server, registry, {});
    port = *server->Start();
    client = std::make_unique<httplib::Client>("127.0.0.1", port);
  }

  // status, parsed body
  std::pair<int, json> Post(const std::string& path, const std::string& body, httplib::Headers headers = {}) {
    httplib::Result result = client->Post(path.c_str(), headers, body, "application/json");
    REQUIRE(result);
    return {result->status, json::parse(result->body, nullptr, false)};
  }
};

TEST_CASE("extender verbs over HTTP with the upstream fixtures", "[extender_http]") {
  const std::optional<json> pod_fixture = ReadFixture("core.v1.Pod.json");
  const std::optional<json> node_fixture = ReadFixture("core.v1.Node.json");
  if (!pod_fixture || !node_fixture) {
    WARN("skipped: no fixtures at " << FixtureDir() << " (set TOPOFIT_SHARED_DIR)");
    return;
  }
  Harness h;
  const json nodes = {{"items", {GpuNode(*node_fixture, "p4d-1", "p4d.24xlarge", 8),
                                 GpuNode(*node_fixture, "g5-1", "g5.48xlarge", 8)}}};
  const json nv_pod = GpuPod(*pod_fixture, "trainer", 4, /*nv_required=*/true);

  SECTION("filter with full Nodes answers with Nodes, FailedNodes and FailedAndUnresolvableNodes") {
    auto [status, reply] = h.Post("/filter", json{{"Pod", nv_pod}, {"Nodes", nodes}, {"NodeNames", nullptr}}.dump());
    REQUIRE(status == 200);
    REQUIRE(reply["Nodes"]["items"].size() == 1);
    CHECK(reply["Nodes"]["items"][0] == nodes["items"][0]);  // echoed exactly as sent
    CHECK(reply["NodeNames"].is_null());
    CHECK(reply["FailedNodes"] == json::object());
    CHECK_THAT(reply["FailedAndUnresolvableNodes"]["g5-1"].get<std::string>(),
               Catch::Contains("needs links of NV or better, best reachable is PHB"));
    CHECK(reply["Error"] == "");
    CHECK(h.metrics.nodes_refused.Value({"min-link"}) == 1);
  }
  SECTION("a large full-Nodes filter reply is the encoder's bytes, the passing nodes spliced from the request") {
    // 300 nodes (over the 256 KiB from which the body is read from the socket directly), NV-capable p4d and
    // PCIe-only g5 in an irregular pattern so that passing runs vary, some separated by more than a comma.
    std::vector<std::string> items;
    std::string body = absl::StrCat(R"({"Pod":)", nv_pod.dump(), R"(,"Nodes":{"metadata":{},"items":[)");
    for (int i = 0; i < 300; ++i) {
      const bool nv = (i * 7) % 11 < 7;
      items.push_back(GpuNode(*node_fixture, absl::StrCat("n", i), nv ? "p4d.24xlarge" : "g5.48xlarge", 8).dump());
      absl::StrAppend(&body, i == 0 ? "" : i % 13 == 0 ? ",\n " : ",", items.back());
    }
    body.append("]},\"NodeNames\":null}");
    REQUIRE(body.size() > (256 << 10));
    httplib::Result result = h.client->Post("/filter", body, "application/json");
    REQUIRE(result);
    REQUIRE(result->status == 200);
    const json reply = json::parse(result->body);
    // The encoder before splicing: the other keys as nlohmann dumps them, then the passing nodes joined by ",".
    std::vector<std::string> passing;
    for (const std::string& item : items) {
      if (!reply["FailedAndUnresolvableNodes"].contains(json::parse(item)["metadata"]["name"])) passing.push_back(item);
    }
    CHECK(passing.size() == 191);
    json others = reply;
    others.erase("Nodes");
    std::string expected = others.dump();
    expected.pop_back();
    absl::StrAppend(&expected, R"(,"Nodes":{"items":[)", absl::StrJoin(passing, ","), R"(],"metadata":{}}})");
    CHECK(result->body == expected);
  }
  SECTION("nodeCacheCapable: NodeNames in, NodeNames out") {
    h.Post("/filter", json{{"Pod", nv_pod}, {"Nodes", nodes}}.dump());  // learn the nodes
    auto [status, reply] = h.Post("/filter", json{{"Pod", nv_pod}, {"Nodes", nullptr}, {"NodeNames", {"p4d-1", "g5-1"}}}.dump());
    REQUIRE(status == 200);
    CHECK(reply["Nodes"].is_null());
    CHECK(reply["NodeNames"] == json({"p4d-1"}));
    CHECK(reply["FailedAndUnresolvableNodes"].contains("g5-1"));
  }
  SECTION("prioritize is a bare HostPriorityList in 0..10") {
    auto [status, reply] = h.Post("/prioritize", json{{"Pod", GpuPod(*pod_fixture, "p", 2, false)}, {"Nodes", nodes}}.dump());
    REQUIRE(status == 200);
    REQUIRE(reply.is_array());
    REQUIRE(reply.size() == 2);
    for (const json& entry : reply) {
      CHECK(entry.size() == 2);
      CHECK(entry["Score"].get<int>() >= 0);
      CHECK(entry["Score"].get<int>() <= 10);
    }
    CHECK(reply[0]["Host"] == "p4d-1");
  }
  SECTION("bind records the GPU ids, then binds; a full node refuses the next pod") {
    h.Post("/filter", json{{"Pod", nv_pod}, {"Nodes", nodes}}.dump());
    h.kube.PutPod(*codec::PodFromJson(nv_pod));  // the API server's pod authorises the bind
    h.clock.Advance(absl::Microseconds(250));  // the stamp keeps microseconds
    auto [status, reply] = h.Post(
        "/bind", json{{"PodName", "trainer"}, {"PodNamespace", "ml"}, {"PodUID", "uid-trainer"}, {"Node", "p4d-1"}}.dump());
    REQUIRE(status == 200);
    CHECK(reply == json{{"Error", ""}});
    // The upstream fixture's pod names a Workload API PodGroup, which this API server does not have: the
    // filter reads it for the gang's count, the bind finds the failed read remembered, and the pod places
    // on its own.
    std::vector<testing::FakeKubeClient::Call> calls;
    int workload_api_reads = 0;
    for (const testing::FakeKubeClient::Call& call : h.kube.calls()) {
      if (call.verb == "get-workload-api") ++workload_api_reads; else calls.push_back(call);
    }
    CHECK(workload_api_reads == 1);
    // The pod read, then the Binding carrying the annotations (the fake lists them in key order): two API
    // calls. The trainer requires NVLink and got it: CA's scale-down must not drain its node (it would
    // refuse every node CA's simulation moves it to).
    REQUIRE(calls.size() == 5);
    CHECK(calls[0].verb == "get");
    CHECK(calls[1].verb == "bind");
    CHECK(calls[1].detail == "p4d-1");
    CHECK(calls[2].verb == "bind-annotation");
    CHECK(calls[2].detail == "cluster-autoscaler.kubernetes.io/safe-to-evict=false");
    CHECK(calls[3].verb == "bind-annotation");
    CHECK(calls[3].detail == "topofit.io/bound-at=2023-11-14T22:13:20.000250Z");  // the fake clock's start + 250 us
    CHECK(calls[4].verb == "bind-annotation");
    CHECK(calls[4].detail == "topofit.io/gpu-ids=0,1,2,3");

    const json big = GpuPod(*pod_fixture, "big", 8, false);
    h.kube.PutPod(*codec::PodFromJson(big));
    auto [status2, reply2] = h.Post(
        "/bind", json{{"PodName", "big"}, {"PodNamespace", "ml"}, {"PodUID", "uid-big"}, {"Node", "p4d-1"}}.dump());
    REQUIRE(status2 == 200);
    CHECK_THAT(reply2["Error"].get<std::string>(), Catch::Contains("needs 8 GPUs, 4 free"));
  }
  SECTION("bind leaves a pod's own safe-to-evict alone, and does not add one to a pod that takes any set") {
    json owned = nv_pod;
    owned["metadata"]["annotations"]["cluster-autoscaler.kubernetes.io/safe-to-evict"] = "true";
    h.Post("/filter", json{{"Pod", owned}, {"Nodes", nodes}}.dump());
    h.kube.PutPod(*codec::PodFromJson(owned));
    REQUIRE(h.Post("/bind", json{{"PodName", "trainer"}, {"PodNamespace", "ml"}, {"PodUID", "uid-trainer"}, {"Node", "p4d-1"}}
                                .dump())
                .second == json{{"Error", ""}});
    const json plain = GpuPod(*pod_fixture, "plain", 4, false);
    h.Post("/filter", json{{"Pod", plain}, {"Nodes", nodes}}.dump());
    h.kube.PutPod(*codec::PodFromJson(plain));
    REQUIRE(h.Post("/bind", json{{"PodName", "plain"}, {"PodNamespace", "ml"}, {"PodUID", "uid-plain"}, {"Node", "p4d-1"}}
                                .dump())
                .second == json{{"Error", ""}});
    for (const auto& call : h.kube.calls()) {
      CHECK_THAT(call.detail, !Catch::Contains("safe-to-evict"));
    }
  }
  SECTION("a failed Binding releases the GPUs") {
    h.Post("/filter", json{{"Pod", nv_pod}, {"Nodes", nodes}}.dump());
    h.kube.PutPod(*codec::PodFromJson(nv_pod));
    // What KubeApi makes of the API server's 409 Conflict (tests/kubeclient/kube_api_test.cc).
    h.kube.FailBindsWith(absl::AbortedError("POST /api/v1/namespaces/ml/pods/trainer/binding: Operation cannot be "
                                            "fulfilled on pods/binding \"trainer\": pod trainer is already "
                                            "assigned to node \"p4d-9\""));
    auto [status, reply] = h.Post(
        "/bind", json{{"PodName", "trainer"}, {"PodNamespace", "ml"}, {"PodUID", "uid-trainer"}, {"Node", "p4d-1"}}.dump());
    REQUIRE(status == 200);
    CHECK_THAT(reply["Error"].get<std::string>(), Catch::Contains("already assigned"));
    CHECK(h.state->Snapshot("p4d-1")->free().size() == 8);
  }
  SECTION("preempt returns NodeNameToMetaVictims") {
    h.Post("/filter", json{{"Pod", nv_pod}, {"Nodes", nodes}}.dump());
    auto [status, reply] = h.Post(
        "/preempt", json{{"Pod", nv_pod},
                         {"NodeNameToMetaVictims", {{"p4d-1", {{"Pods", {{{"UID", "cpu-pod"}}}}, {"NumPDBViolations", 0}}}}}}
                        .dump());
    REQUIRE(status == 200);
    CHECK(reply == json{{"NodeNameToMetaVictims",
                         {{"p4d-1", {{"Pods", {{{"UID", "cpu-pod"}}}}, {"NumPDBViolations", 0}}}}}});
  }
  SECTION("no node can host an NV-required pod: a preference is recorded and served") {
    const json only_g5 = {{"items", {GpuNode(*node_fixture, "g5-1", "g5.48xlarge", 8)}}};
    h.Post("/filter", json{{"Pod", nv_pod}, {"Nodes", only_g5}}.dump());
    httplib::Result result = h.client->Get("/preferences");
    REQUIRE(result);
    const json preferences = json::parse(result->body);
    REQUIRE(preferences.size() == 1);
    CHECK(preferences[0]["pod"] == "ml/trainer");
    CHECK(preferences[0]["gpus"] == 4);
    CHECK(preferences[0]["minLink"] == "NV");
    CHECK(preferences[0]["refusedNodes"] == json({"g5-1"}));
    CHECK(h.metrics.pending_preferences.Value() == 1);
  }
}

// An extender whose leadership the test switches, on the fixture's state and fake client.
struct Replica : testing::ExtenderFixture {
  struct SwitchedLeadership final : Leadership {
    bool IsLeader() const override { return leader; }
    std::atomic<bool> leader{true};
  } leadership;
  Extender replica{*state, *ledger, kube, metrics, log, clock, &capacity, leadership};
};

TEST_CASE("Only the leader binds: a follower answers with an error kube-scheduler retries, and touches nothing",
          "[extender]") {
  Replica r;
  REQUIRE(r.state->UpsertNode(
                    kube::testing::MakeNode().name("n1").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8))
              .ok());
  r.kube.PutPod(kube::testing::MakePod().name("trainer").gpus(4));  // namespace "default", uid "uid-trainer"
  const codec::ExtenderBindingArgs args{"trainer", "default", "uid-trainer", "n1"};

  r.leadership.leader = false;
  CHECK_THAT(r.replica.Bind(args).value(), Catch::Contains("not the leader"));
  CHECK(r.kube.calls().empty());
  CHECK(r.state->Snapshot("n1")->free().size() == 8);
  CHECK(r.metrics.binds.Value({"not_leader"}) == 1);

  r.leadership.leader = true;  // elected: the retried bind goes through
  CHECK(r.replica.Bind(args).value() == "");
  CHECK(r.state->Snapshot("n1")->free().size() == 4);
}

TEST_CASE("Only the leader requests capacity for a pod every node refused", "[extender]") {
  Replica r;
  REQUIRE(r.state->UpsertNode(
                    kube::testing::MakeNode().name("n1").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8))
              .ok());
  const codec::ExtenderArgs args{kube::testing::MakePod().name("huge").gpus(16), std::nullopt,
                                 std::vector<std::string>{"n1"}};

  r.leadership.leader = false;
  REQUIRE(r.replica.Filter(args).value().failed_and_unresolvable_nodes.count("n1") == 1);
  CHECK(r.capacity.calls().empty());
  CHECK(r.ledger->Preferences().size() == 1);  // the preference is still recorded: it writes nothing

  r.leadership.leader = true;
  REQUIRE(r.replica.Filter(args).ok());
  CHECK(r.capacity.calls() == std::vector<std::string>{"request default/huge refused=n1"});
}

// nodeCacheCapable: true sends names from kube-scheduler's cache, which may hold a node topofit's node watch
// has not delivered yet. That node fails alone, where kube-scheduler retries it; the others are judged.
TEST_CASE("nodeCacheCapable: a node name topofit has not seen fails that node alone, in every verb",
          "[extender_http]") {
  Harness h;
  REQUIRE(h.state->UpsertNode(
                    kube::testing::MakeNode().name("p4d-1").label("node.kubernetes.io/instance-type", "p4d.24xlarge").gpus(8))
              .ok());
  const json pod = {{"metadata", {{"name", "p"}, {"namespace", "ml"}, {"uid", "uid-p"}}},
                    {"spec", {{"containers", {{{"name", "main"}, {"resources", {{"limits", {{"nvidia.com/gpu", "2"}}}}}}}}}}};
  const json names = {"p4d-1", "ghost-1", "ghost-2"};

  auto [filter_status, filtered] = h.Post("/filter", json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}}.dump());
  REQUIRE(filter_status == 200);
  CHECK(filtered["NodeNames"] == json({"p4d-1"}));
  CHECK(filtered["Nodes"].is_null());
  CHECK(filtered["FailedNodes"] ==
        json({{"ghost-1", "topofit: unknown node (not yet seen by topofit's node watch)"},
              {"ghost-2", "topofit: unknown node (not yet seen by topofit's node watch)"}}));
  CHECK(filtered["FailedAndUnresolvableNodes"] == json::object());  // retried, unlike an unresolvable node
  CHECK(filtered["Error"] == "");
  CHECK(h.metrics.nodes_refused.Value({"unknown-node"}) == 2);
  CHECK(h.ledger->Preferences().empty());  // a node passed: no capacity is wanted

  auto [prioritize_status, scores] = h.Post("/prioritize", json{{"Pod", pod}, {"NodeNames", names}}.dump());
  REQUIRE(prioritize_status == 200);
  REQUIRE(scores.size() == 3);
  for (const json& entry : scores) {
    if (entry["Host"] != "p4d-1") CHECK(entry["Score"] == 0);
  }

  auto [preempt_status, kept] = h.Post(
      "/preempt", json{{"Pod", pod},
                       {"NodeNameToMetaVictims",
                        {{"p4d-1", {{"Pods", {{{"UID", "cpu-pod"}}}}, {"NumPDBViolations", 0}}},
                         {"ghost-1", {{"Pods", {{{"UID", "other"}}}}, {"NumPDBViolations", 0}}}}}}
                      .dump());
  REQUIRE(preempt_status == 200);
  CHECK(kept["NodeNameToMetaVictims"].contains("p4d-1"));
  CHECK_FALSE(kept["NodeNameToMetaVictims"].contains("ghost-1"));
}

TEST_CASE("bad requests get a 4xx JSON error and the server stays healthy", "[extender_http]") {
  Harness h;
  struct Row {
    const char* name;
    std::string path;
    std::string body;
    int status;
    const char* message;
  };
  const Row rows[] = {
      {"malformed JSON", "/filter", "{\"Pod\": ", 400, "malformed JSON"},
      {"not an object", "/filter", "[1,2]", 400, "expected a JSON object"},
      {"no pod", "/filter", "{\"NodeNames\": []}", 400, "Pod: missing"},
      {"pod of the wrong type", "/filter", "{\"Pod\": 5}", 400, "Pod: expected an object"},
      {"node names of the wrong type", "/prioritize", "{\"Pod\": {}, \"NodeNames\": \"n1\"}", 400, "NodeNames: expected an array"},
      {"bad quantity", "/filter",
       R"({"Pod": {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "lots"}}}]}}})", 400,
       "nvidia.com/gpu"},
      {"bind without a pod name", "/bind", R"({"PodNamespace": "d", "PodUID": "u", "Node": "n"})", 400, "PodName"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      auto [status, reply] = h.Post(row.path, row.body);
      CHECK(status == row.status);
      CHECK_THAT(reply["error"].get<std::string>(), Catch::Contains(row.message));
    }
  }
  SECTION("a bind to an unknown node is refused in the reply, as kube-scheduler reads bind errors") {
    auto [status, reply] = h.Post("/bind", R"({"PodName": "p", "PodNamespace": "d", "PodUID": "u", "Node": "ghost"})");
    CHECK(status == 200);
    CHECK(reply["Error"] == "topofit: bind refused (unknown-node): unknown node ghost");
    CHECK(h.metrics.bind_refusals.Value({"unknown-node"}) == 1);
    CHECK(h.kube.calls().empty());
  }
  SECTION("a 100 MB body is refused from its header, without being read") {
    // A raw request: httplib's client writes the whole body before it reads, and would only see the
    // server hang up.
    const std::string reply = RawExchange(h.port, "POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                                  "Content-Length: 104857600\r\n\r\n{\"Pod\": ");
    CHECK_THAT(reply, Catch::StartsWith("HTTP/1.1 413"));
    CHECK_THAT(reply, Catch::Contains("\"error\""));
  }
  httplib::Result health = h.client->Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
}

// kube-scheduler's bind waits on the API server, through a client limited to a few requests a second; on
// the server's I/O threads, binds waiting on a slow API server would hold up every filter.
TEST_CASE("A bind waiting on the API server does not hold up filter, even with one I/O thread", "[extender_http]") {
  Harness h(/*io_threads=*/1);
  REQUIRE(h.state->UpsertNode(kube::testing::MakeNode().name("n1").label("node.kubernetes.io/instance-type",
                                                                          "p4d.24xlarge").gpus(8)).ok());
  h.kube.PutPod(kube::testing::MakePod().name("trainer").uid("uid-trainer").gpus(2));
  h.kube.HoldBinds();

  std::future<httplib::Result> bind = std::async(std::launch::async, [&h] {
    httplib::Client binder("127.0.0.1", h.port);
    binder.set_read_timeout(30, 0);
    return binder.Post("/bind", R"({"PodName": "trainer", "PodNamespace": "default", "PodUID": "uid-trainer", "Node": "n1"})",
                       "application/json");
  });
  REQUIRE(kubeclient::testing::Eventually([&h] {
    const std::vector<testing::FakeKubeClient::Call> calls = h.kube.calls();
    return std::any_of(calls.begin(), calls.end(), [](const auto& call) { return call.verb == "bind"; });
  }));
  // The bind is waiting on the API server now. Without the blocking pool, the one I/O thread would be its.
  httplib::Client scheduler("127.0.0.1", h.port);
  scheduler.set_read_timeout(10, 0);  // only so that a failure ends
  httplib::Result filter = scheduler.Post("/filter", R"({"Pod": {"metadata": {"name": "p"}}, "NodeNames": ["n1"]})",
                                          "application/json");
  h.kube.ReleaseBinds();
  REQUIRE(filter);
  CHECK(filter->status == 200);
  httplib::Result bound = bind.get();
  REQUIRE(bound);
  CHECK(json::parse(bound->body)["Error"] == "");
}

// Request bodies are bounded before anything is built from them (codec/json_limits.h), and a refused one
// changes nothing: a pod report valid in every field it is read for, with 100,000 nested arrays beside them,
// and a filter of 4,000,001 node names, refused on the byte scan before simdjson indexes it.
TEST_CASE("request bodies beyond the JSON limits are refused before they are parsed", "[extender_http]") {
  Harness h;
  REQUIRE(h.state->UpsertNode(kube::testing::MakeNode().name("n1").label("node.kubernetes.io/instance-type",
                                                                          "p4d.24xlarge").gpus(8)).ok());
  const httplib::Headers auth = {{"Authorization", std::string("Bearer ") + kToken}};
  const json report = {{"uid", "u1"}, {"namespace", "d"}, {"name", "p"}, {"node", "n1"}, {"gpus", 2}};
  const std::string deep = topofit::testing::WithRawMember(report, "x", topofit::testing::NestedArrays(100'000));
  const auto [status, body] = h.Post("/admin/pods", deep, auth);
  CHECK(status == 400);
  CHECK(body["error"] == "pod report: JSON nested deeper than 64 levels");
  CHECK(h.state->Snapshot("n1")->free().size() == 8);

  std::string names = "0";
  for (int i = 0; i < 4'000'000; ++i) names += ",0";
  const auto [filter_status, filter_body] =
      h.Post("/filter", absl::StrCat(R"({"Pod": {"metadata": {"name": "p"}}, "NodeNames": [)", names, "]}"));
  CHECK(filter_status == 400);
  CHECK(filter_body["error"] == "ExtenderArgs: JSON of more than 4000000 values");
}

TEST_CASE("admin endpoints need the bearer token", "[extender_http]") {
  Harness h;
  kube::Node node;
  node.metadata.name = "n1";
  node.metadata.labels["node.kubernetes.io/instance-type"] = "p4d.24xlarge";
  node.status.allocatable["nvidia.com/gpu"] = 8000;
  REQUIRE(h.state->UpsertNode(node).ok());
  const std::string report = R"({"uid": "u1", "namespace": "d", "name": "p", "node": "n1", "gpus": 2, "gpuIds": "4,5"})";

  CHECK(h.Post("/admin/pods", report).first == 401);
  CHECK(h.Post("/admin/pods", report, {{"Authorization", "Bearer wrong"}}).first == 401);
  const httplib::Headers auth = {{"Authorization", std::string("Bearer ") + kToken}};
  CHECK(h.Post("/admin/pods", report, auth).first == 200);
  CHECK(h.state->Snapshot("n1")->free().size() == 6);
  CHECK(h.Post("/admin/pods", R"({"uid": "u2", "namespace": "d", "name": "q", "node": "n1", "gpus": "two"})", auth)
            .first == 400);
  // Counts out of range are refused, not wrapped (4294967297 read as an int was 1) nor summed into an
  // overflow (two reports of 2^31-1).
  for (const char* gpus : {"4294967297", "2147483647", "-1", "17"}) {
    CAPTURE(gpus);
    const auto [status, body] = h.Post(
        "/admin/pods", absl::StrCat(R"({"uid": "u3", "namespace": "d", "name": "r", "node": "n1", "gpus": )", gpus, "}"),
        auth);
    CHECK(status == 400);
    CHECK(body["error"] == "gpus: expected an integer from 0 to 16");
  }
  CHECK(h.state->Snapshot("n1")->free().size() == 6);

  httplib::Result deleted = h.client->Delete("/admin/pods/u1", auth);
  REQUIRE(deleted);
  CHECK(deleted->status == 200);
  CHECK(json::parse(deleted->body)["released"] == true);
  CHECK(h.state->Snapshot("n1")->free().size() == 8);
}

}  // namespace
}  // namespace topofit::scheduler
