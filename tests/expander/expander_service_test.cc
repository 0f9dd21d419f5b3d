// The expander end to end: a real gRPC client over real TLS calling /grpcplugin.Expander/BestOptions with
// requests laid out as each cluster-autoscaler generation sends them. RankOptions' tie-breaks are tested in
// rank_test.cc; these tests assert only what must hold whatever they are: the NVLink group wins for an
// NV-required pod, the PCIe group never does, CPU-only options pass through.

#include "expander/expander_service.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <future>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <openssl/ssl.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>

#include "absl/strings/str_cat.h"
#include "codec/ledger_json.h"
#include "expander/grpc_server.h"
#include "ledger/ledger.h"
#include "server/logging.h"
#include "spdlog/sinks/ostream_sink.h"
#include "tests/expander/answer_message.h"
#include "tests/expander/raw_best_options.h"
#include "tests/history/memory_recorder.h"
#include "tests/kube/status_matchers.h"
#include "tests/server/mounted_secret.h"
#include "tests/server/test_certs.h"

namespace topofit::expander {
namespace {

namespace corev1 = ::k8s::io::api::core::v1;

// --- Protobuf builders: the objects as CA's Go code marshals them.

class NodeProto {
 public:
  explicit NodeProto(const std::string& group) {
    const std::string name = "template-node-for-" + group + "-5827361";
    node_.mutable_metadata()->set_name(name);
    (*node_.mutable_metadata()->mutable_labels())["kubernetes.io/hostname"] = name;
    allocatable("cpu", "96").allocatable("memory", "1100Gi").allocatable("pods", "110");
  }
  NodeProto& instance_type(const std::string& type) {
    (*node_.mutable_metadata()->mutable_labels())["node.kubernetes.io/instance-type"] = type;
    return *this;
  }
  NodeProto& gpus(int n) { return allocatable("nvidia.com/gpu", std::to_string(n)); }
  NodeProto& allocatable(const std::string& resource, const std::string& quantity) {
    (*node_.mutable_status()->mutable_allocatable())[resource].set_string(quantity);
    (*node_.mutable_status()->mutable_capacity())[resource].set_string(quantity);
    return *this;
  }
  operator const corev1::Node&() const { return node_; }

 private:
  corev1::Node node_;
};

class PodProto {
 public:
  explicit PodProto(const std::string& name) {
    pod_.mutable_metadata()->set_name(name);
    pod_.mutable_metadata()->set_namespace_("ml");
    pod_.mutable_metadata()->set_uid("uid-" + name);
    container_ = pod_.mutable_spec()->add_containers();
    container_->set_name("main");
    request("cpu", "8");
  }
  PodProto& gpus(int n) {
    request("nvidia.com/gpu", std::to_string(n));
    (*container_->mutable_resources()->mutable_limits())["nvidia.com/gpu"].set_string(std::to_string(n));
    return *this;
  }
  PodProto& nv_required() {
    (*pod_.mutable_metadata()->mutable_annotations())["topofit.io/min-link"] = "NV";
    (*pod_.mutable_metadata()->mutable_annotations())["topofit.io/topology-policy"] = "required";
    return *this;
  }
  PodProto& request(const std::string& resource, const std::string& quantity) {
    (*container_->mutable_resources()->mutable_requests())[resource].set_string(quantity);
    return *this;
  }
  PodProto& annotation(const std::string& key, const std::string& value) {
    (*pod_.mutable_metadata()->mutable_annotations())[key] = value;
    return *this;
  }
  operator const corev1::Pod&() const { return pod_; }

 private:
  corev1::Pod pod_;
  corev1::Container* container_;
};

// The three wire generations (docs/expander.md, "Wire").
enum class Layout { kMessages /* CA <= 1.34.1 */, kBoth /* 1.34.2 - 1.34.5 */, kBytes /* >= 1.35.0 */ };

class RequestBuilder {
 public:
  explicit RequestBuilder(Layout layout) : layout_(layout) {}
  RequestBuilder& group(const std::string& id, const corev1::Node& node) {
    if (layout_ != Layout::kBytes) (*request_.mutable_nodemap())[id] = node;
    if (layout_ != Layout::kMessages) (*request_.mutable_nodebytesmap())[id] = node.SerializeAsString();
    return *this;
  }
  RequestBuilder& option(const std::string& id, int count, const std::vector<corev1::Pod>& pods) {
    ::grpcplugin::Option* option = request_.add_options();
    option->set_nodegroupid(id);
    option->set_nodecount(count);
    option->set_debug("estimator packed " + std::to_string(pods.size()) + " pods");
    for (const corev1::Pod& pod : pods) {
      if (layout_ != Layout::kBytes) *option->add_pod() = pod;
      if (layout_ != Layout::kMessages) option->add_podbytes(pod.SerializeAsString());
    }
    return *this;
  }
  ::grpcplugin::BestOptionsRequest& build() { return request_; }

 private:
  const Layout layout_;
  ::grpcplugin::BestOptionsRequest request_;
};

// A cluster of three node groups: NVSwitch A100s, PCIe A10Gs, CPU-only.
RequestBuilder ThreeGroups(Layout layout) {
  RequestBuilder request(layout);
  request.group("p4d", NodeProto("p4d").instance_type("p4d.24xlarge").gpus(8))
      .group("g5", NodeProto("g5").instance_type("g5.48xlarge").gpus(8))
      .group("cpu", NodeProto("cpu").instance_type("m6i.24xlarge"));
  return request;
}

std::vector<std::string> Ids(const ::grpcplugin::BestOptionsResponse& response) {
  std::vector<std::string> ids;
  for (const ::grpcplugin::Option& option : response.options()) ids.push_back(option.nodegroupid());
  return ids;
}

bool Contains(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// --- The service behind a TLS gRPC server on loopback, and a client that verifies it against the test CA.

struct Fixture {
  explicit Fixture(ExpanderServiceOptions options = {}, GrpcServerOptions server_options = {}) {
    absl::StatusOr<std::unique_ptr<testing::TestCerts>> made = testing::TestCerts::Create();
    REQUIRE_OK(made);
    certs = *std::move(made);
    log = server::MakeLogger("expander-test", {server::LogFormat::kJson, spdlog::level::info},
                             std::make_shared<spdlog::sinks::ostream_sink_mt>(logged));
    service = std::make_unique<ExpanderService>(std::move(options), *ledger, clock, metrics, *log);
    server_options.address = "127.0.0.1";
    server_options.port = 0;
    if (!server_options.insecure) {
      server_options.tls_cert_file = certs->server_cert_file();
      server_options.tls_key_file = certs->server_key_file();
    }
    absl::StatusOr<std::unique_ptr<GrpcServer>> started = GrpcServer::Start(server_options, *service);
    REQUIRE_OK(started);
    server = *std::move(started);
  }

  std::shared_ptr<::grpc::ChannelCredentials> TlsCredentials(bool client_cert = false) const {
    ::grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = Read(certs->ca_cert_file());
    if (client_cert) {
      ssl.pem_cert_chain = Read(certs->client_cert_file());
      ssl.pem_private_key = Read(certs->client_key_file());
    }
    return ::grpc::SslCredentials(ssl);
  }

  // Calls BestOptions with CA's fixed 5 s deadline, unless told otherwise.
  ::grpc::Status Call(const ::grpcplugin::BestOptionsRequest& request, ::grpcplugin::BestOptionsResponse* response,
                      std::shared_ptr<::grpc::ChannelCredentials> credentials = nullptr,
                      std::chrono::seconds deadline = std::chrono::seconds(5)) const {
    ::grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(-1);
    auto channel = ::grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server->port()),
                                               credentials ? credentials : TlsCredentials(), args);
    ::grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + deadline);
    return ::grpcplugin::Expander::NewStub(channel)->BestOptions(&context, request, response);
  }

  absl::StatusOr<::grpcplugin::BestOptionsResponse> Answer(const ::grpcplugin::BestOptionsRequest& request,
                                                           const CallDeadline& deadline) const {
    return testing::AnswerMessage(*service, request, deadline);
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  server::RealClock clock;
  std::unique_ptr<ledger::Ledger> ledger = ledger::NewInMemoryLedger(clock);
  server::MetricsRegistry registry;
  ExpanderMetrics metrics = ExpanderMetrics::Create(registry);
  std::ostringstream logged;
  std::shared_ptr<spdlog::logger> log;
  std::unique_ptr<testing::TestCerts> certs;
  std::unique_ptr<ExpanderService> service;
  std::unique_ptr<GrpcServer> server;
};

TEST_CASE("The method path is CA's /grpcplugin.Expander/BestOptions", "[expander]") {
  const auto* service = ::grpcplugin::BestOptionsRequest::descriptor()->file()->FindServiceByName("Expander");
  REQUIRE(service != nullptr);
  CHECK(service->full_name() == "grpcplugin.Expander");
  REQUIRE(service->FindMethodByName("BestOptions") != nullptr);
}

TEST_CASE("An NV-required 4-GPU pod grows the NVLink group, never the PCIe one, in every wire generation",
          "[expander][grpc]") {
  Fixture f;
  const PodProto trainer = PodProto("trainer").gpus(4).nv_required();
  const PodProto web = PodProto("web");
  std::vector<std::vector<std::string>> answers;
  for (Layout layout : {Layout::kMessages, Layout::kBoth, Layout::kBytes}) {
    RequestBuilder request = ThreeGroups(layout);
    request.option("g5", 1, {trainer}).option("p4d", 1, {trainer}).option("cpu", 1, {web});
    ::grpcplugin::BestOptionsResponse response;
    const ::grpc::Status status = f.Call(request.build(), &response);
    INFO("layout " << static_cast<int>(layout) << ": " << status.error_message());
    REQUIRE(status.ok());
    const std::vector<std::string> ids = Ids(response);
    CHECK(ids.front() == "p4d");
    CHECK_FALSE(Contains(ids, "g5"));
    CHECK(Contains(ids, "cpu"));  // no GPU pods: passed through for the rest of CA's chain
    answers.push_back(ids);
  }
  CHECK(answers[0] == answers[1]);
  CHECK(answers[1] == answers[2]);

  CHECK(f.metrics.calls.Value({"ok"}) == 3);
  CHECK(f.metrics.options_stranding.Value() == 3);  // g5, once per call
  CHECK(f.metrics.decisions.Value({"p4d"}) == 3);
  CHECK(f.metrics.latency.Count() == 3);
  CHECK_THAT(f.logged.str(), Catch::Contains(R"("msg":"best_options")"));
  CHECK_THAT(f.logged.str(), Catch::Contains(R"("node_group":"g5","strands":true)"));

  SECTION("one GPU group chosen: the intent is recorded for its pods, and served as JSON") {
    const std::vector<decision::Intent> intents = f.ledger->Intents();
    REQUIRE(intents.size() == 3);  // one per call
    CHECK(intents.back().node_group == "p4d");
    CHECK(intents.back().node_count == 1);
    CHECK(intents.back().pod_uids == std::vector<std::string>{"uid-trainer"});
    CHECK(intents.back().pod_gpus == std::map<std::string, int>{{"uid-trainer", 4}});  // NV required
    // The template's hostname is its own; the instance type is what the group's new nodes will carry.
    CHECK(intents.back().node_labels == kube::StringMap{{"node.kubernetes.io/instance-type", "p4d.24xlarge"}});
    CHECK_THAT(codec::IntentsToJson(intents).dump(), Catch::Contains("uid-trainer"));
  }
  SECTION("the GPU groups' templates are kept for the extender, which sees no node of a group at size zero") {
    const std::map<std::string, ledger::NodeGroupTemplate> groups = f.ledger->NodeGroups();
    CHECK(groups.size() == 2);  // g5 and p4d; the cpu group has no GPUs
    REQUIRE(groups.count("p4d") == 1);
    CHECK(groups.at("p4d").template_node.metadata.labels.at("node.kubernetes.io/instance-type") == "p4d.24xlarge");
    CHECK_FALSE(groups.at("p4d").trusted);  // the fixture's peer sent no client certificate
    CHECK(groups.count("cpu") == 0);
  }
}

TEST_CASE("An intent for a ProvisioningRequest's pods is recorded for the pod they stand for", "[expander][grpc]") {
  Fixture f;
  // As CA makes them from topofit's PodTemplate: uid "namespace/name", the pending pod's uid annotated.
  const PodProto from_request = PodProto("topofit-trainer-0-0").gpus(8).nv_required()
      .annotation("topofit.io/stands-for-pod-uid", "uid-trainer");
  RequestBuilder request = ThreeGroups(Layout::kBytes);
  request.option("p4d", 1, {from_request});
  ::grpcplugin::BestOptionsResponse response;
  REQUIRE(f.Call(request.build(), &response).ok());
  const std::vector<decision::Intent> intents = f.ledger->Intents();
  REQUIRE(intents.size() == 1);
  CHECK(intents[0].pod_uids == std::vector<std::string>{"uid-trainer"});
}

TEST_CASE("CA's capacity-buffer pods shape the scale-up, but no capacity is held for them", "[expander][grpc]") {
  Fixture f;
  // As CA injects a CapacityBuffer's pods: copies of its template (here asking for 4 GPUs over NVLink),
  // named capacity-buffer-<buffer>-<i>, uid <buffer>-<i>, annotated podType: capacityBufferFakePod.
  auto buffer_pod = [](int i) {
    PodProto pod("capacity-buffer-nv4-" + std::to_string(i));
    pod.gpus(4).nv_required().annotation("podType", "capacityBufferFakePod");
    return pod;
  };
  const PodProto trainer = PodProto("trainer").gpus(4).nv_required();
  RequestBuilder request = ThreeGroups(Layout::kBytes);
  request.option("g5", 1, {buffer_pod(1)}).option("p4d", 1, {buffer_pod(1)});
  ::grpcplugin::BestOptionsResponse response;
  REQUIRE(f.Call(request.build(), &response).ok());
  CHECK(Ids(response).front() == "p4d");  // ranked by the shape it asks for, as a real pod would be
  CHECK(f.ledger->Intents().empty());     // buffered capacity is for whichever real pod comes first

  RequestBuilder mixed = ThreeGroups(Layout::kBytes);
  mixed.option("p4d", 1, {buffer_pod(2), trainer});
  REQUIRE(f.Call(mixed.build(), &response).ok());
  const std::vector<decision::Intent> intents = f.ledger->Intents();
  REQUIRE(intents.size() == 1);
  CHECK(intents[0].pod_uids == std::vector<std::string>{"uid-trainer"});
  CHECK(intents[0].pod_gpus == std::map<std::string, int>{{"uid-trainer", 4}});
}

TEST_CASE("The ranking and its intent are recorded on the pod the ProvisioningRequest stands for",
          "[expander][history]") {
  Fixture f;
  history::testing::MemoryRecorder recorder;
  f.service->RecordDecisionsTo(&recorder);
  // The extender asked capacity for the trainer: the ranking joins its chain (CA's other pods do not).
  decision::Preference asked;
  asked.pod_uid = "uid-trainer";
  asked.pod_key = "ml/trainer";
  asked.gpus = 8;
  f.ledger->RecordPreference(asked);
  const PodProto from_request = PodProto("topofit-trainer-0-0").gpus(8).nv_required()
      .annotation("topofit.io/stands-for-pod-uid", "uid-trainer");
  RequestBuilder request = ThreeGroups(Layout::kBytes);
  request.option("g5", 1, {from_request, PodProto("other").gpus(1)})
      .option("p4d", 1, {from_request})
      .option("cpu", 1, {PodProto("web")});
  REQUIRE_OK(f.Answer(request.build(), {absl::InfiniteFuture(), nullptr}));
  const std::vector<history::Record> records = recorder.records();
  REQUIRE(records.size() == 2);
  const history::Record& ranking = records[0];
  CHECK(ranking.kind == history::Kind::kRanking);
  CHECK(ranking.reason == history::Reason::kChosen);
  CHECK(ranking.node_group == "p4d");
  // Named as the pod itself, not CA's stand-in: the Events about the scale-up go on that pod.
  CHECK(ranking.pods == std::vector<history::PodSubject>{{"uid-trainer", "ml/trainer"}});
  REQUIRE(ranking.candidates.size() == 2);  // the CPU option is passed through unjudged
  CHECK(ranking.candidates[0].name == "g5");
  CHECK(ranking.candidates[0].reason == history::Reason::kGroupWouldStrand);
  CHECK(ranking.candidates[0].requested == 1);  // one pod its new node would refuse
  CHECK(ranking.candidates[1].name == "p4d");
  CHECK(ranking.candidates[1].reason == history::Reason::kChosen);
  CHECK(ranking.candidates[1].quality_per_mille == 1000);
  const history::Record& intent = records[1];
  CHECK(intent.kind == history::Kind::kIntent);
  CHECK(intent.node_group == "p4d");
  CHECK(intent.gpus == 8);
  CHECK(intent.pods == std::vector<history::PodSubject>{{"uid-trainer", "ml/trainer"}});
}

TEST_CASE("When every GPU option would strand, the reply is the deliberate empty veto", "[expander][grpc]") {
  const PodProto trainer = PodProto("trainer").gpus(4).nv_required();
  SECTION("veto on (default): OK with no options, no intent") {
    Fixture f;
    RequestBuilder request = ThreeGroups(Layout::kBytes);
    request.option("g5", 1, {trainer});
    ::grpcplugin::BestOptionsResponse response;
    REQUIRE(f.Call(request.build(), &response).ok());
    CHECK(response.options().empty());
    CHECK(f.metrics.calls.Value({"veto"}) == 1);
    CHECK(f.ledger->Intents().empty());
  }
  SECTION("veto off: never an empty reply") {
    ExpanderServiceOptions options;
    options.policy.veto_when_all_strand = false;
    Fixture f(options);
    RequestBuilder request = ThreeGroups(Layout::kBytes);
    request.option("g5", 1, {trainer});
    ::grpcplugin::BestOptionsResponse response;
    REQUIRE(f.Call(request.build(), &response).ok());
    CHECK_FALSE(response.options().empty());
  }
}

TEST_CASE("Garbage in podBytes is INVALID_ARGUMENT saying where", "[expander][grpc]") {
  Fixture f;
  RequestBuilder request = ThreeGroups(Layout::kBytes);
  request.option("p4d", 1, {PodProto("trainer").gpus(4)});
  request.build().mutable_options(0)->set_podbytes(0, "\xff\xff\xff garbage");
  ::grpcplugin::BestOptionsResponse response;
  const ::grpc::Status status = f.Call(request.build(), &response);
  CHECK(status.error_code() == ::grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(status.error_message(), Catch::Contains("options[0].podBytes[0]"));
  CHECK(f.metrics.calls.Value({"invalid_argument"}) == 1);
}

TEST_CASE("10,000 options are answered within CA's deadline", "[expander][grpc][large]") {
  Fixture f;
  RequestBuilder request(Layout::kBytes);
  const PodProto trainer = PodProto("trainer").gpus(4).nv_required();
  for (int i = 0; i < 5'000; ++i) {
    const std::string nv = "p4d-" + std::to_string(i), pcie = "g5-" + std::to_string(i);
    request.group(nv, NodeProto(nv).instance_type("p4d.24xlarge").gpus(8))
        .group(pcie, NodeProto(pcie).instance_type("g5.48xlarge").gpus(8))
        .option(pcie, 1, {trainer})
        .option(nv, 1, {trainer});
  }
  REQUIRE(request.build().options_size() == 10'000);
  ::grpcplugin::BestOptionsResponse response;
  const ::grpc::Status status = f.Call(request.build(), &response);
  INFO(status.error_message());
  REQUIRE(status.ok());
  const std::vector<std::string> ids = Ids(response);
  REQUIRE_FALSE(ids.empty());
  for (const std::string& id : ids) CHECK(id.rfind("p4d-", 0) == 0);
}

TEST_CASE("Requests over the limits are RESOURCE_EXHAUSTED", "[expander][grpc]") {
  SECTION("more options than max_options: refused before decoding") {
    ExpanderServiceOptions options;
    options.max_options = 2;
    Fixture f(options);
    RequestBuilder request = ThreeGroups(Layout::kBytes);
    request.option("p4d", 1, {}).option("g5", 1, {}).option("cpu", 1, {});
    ::grpcplugin::BestOptionsResponse response;
    const ::grpc::Status status = f.Call(request.build(), &response);
    CHECK(status.error_code() == ::grpc::StatusCode::RESOURCE_EXHAUSTED);
    CHECK_THAT(status.error_message(), Catch::Contains("3 options, more than the 2"));
  }
  SECTION("a message over the receive limit: gRPC refuses it") {
    GrpcServerOptions server_options;
    server_options.max_receive_bytes = 64 << 10;
    Fixture f({}, server_options);
    RequestBuilder request = ThreeGroups(Layout::kBytes);
    request.build().add_options()->set_debug(std::string(128 << 10, 'x'));
    ::grpcplugin::BestOptionsResponse response;
    CHECK(f.Call(request.build(), &response).error_code() == ::grpc::StatusCode::RESOURCE_EXHAUSTED);
  }
}

// The server's receive limit is 128 MiB (kMaxReceiveBytes), as CA's on the replies it receives; CA sets
// none on what it sends. Whatever arrives at that scale is answered or refused with a status, and the server
// goes on serving. In a Release build the answered 100 MB call takes ~1.6 s, inside CA's 5 s deadline
// (docs/expander.md); under the sanitizers the generated protobuf code alone makes it ~3.3 s, so these
// calls get 60 s: enough not to flake beside other tests, and still a failure for a hang.
TEST_CASE("A 100 MB request is answered or refused, never a crash or a hang, and the server stays healthy",
          "[expander][grpc][large]") {
  REQUIRE(GrpcServerOptions{}.max_receive_bytes == 128 * 1024 * 1024);
  Fixture f;  // the default receive limit
  const auto large_call = [&f](const ::grpcplugin::BestOptionsRequest& request,
                               ::grpcplugin::BestOptionsResponse* response) {
    return f.Call(request, response, nullptr, std::chrono::seconds(60));
  };
  const PodProto trainer = PodProto("trainer").gpus(4).nv_required();
  const auto healthy = [&] {
    RequestBuilder small = ThreeGroups(Layout::kBytes);
    small.option("g5", 1, {trainer}).option("p4d", 1, {trainer});
    ::grpcplugin::BestOptionsResponse response;
    const ::grpc::Status status = f.Call(small.build(), &response);
    INFO(status.error_message());
    REQUIRE(status.ok());
    CHECK(Ids(response) == std::vector<std::string>{"p4d"});
  };
  constexpr size_t kMB = 1'000'000;

  SECTION("1,000 distinct pods of 100 kB each (a bloated last-applied-configuration): answered") {
    // 1,000 x 4 NV-required GPUs on 500 p4d nodes; the g5 option strands on the same pods.
    const std::string bloat(100'000, 'x');
    std::vector<corev1::Pod> pods;
    for (int i = 0; i < 1'000; ++i) {
      pods.push_back(PodProto("trainer-" + std::to_string(i))
                         .gpus(4)
                         .nv_required()
                         .annotation("kubectl.kubernetes.io/last-applied-configuration", bloat));
    }
    RequestBuilder request = ThreeGroups(Layout::kBytes);
    request.option("p4d", 500, pods).option("g5", 1, {trainer});
    const size_t bytes = request.build().ByteSizeLong();
    CHECK(bytes > 100 * kMB);
    CHECK(bytes < static_cast<size_t>(kMaxReceiveBytes));
    ::grpcplugin::BestOptionsResponse response;
    const ::grpc::Status status = large_call(request.build(), &response);
    INFO(status.error_message());
    REQUIRE(status.ok());
    CHECK(Ids(response) == std::vector<std::string>{"p4d"});
    healthy();
  }
  SECTION("100 MB of garbage in one podBytes entry: INVALID_ARGUMENT") {
    RequestBuilder request = ThreeGroups(Layout::kBytes);
    request.option("p4d", 1, {trainer});
    request.build().mutable_options(0)->set_podbytes(0, std::string(100 * kMB, '\xff'));
    ::grpcplugin::BestOptionsResponse response;
    const ::grpc::Status status = large_call(request.build(), &response);
    CHECK(status.error_code() == ::grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(status.error_message(), Catch::Contains("options[0].podBytes[0]: malformed Pod protobuf"));
    healthy();
  }
  SECTION("one byte over 128 MiB of message: RESOURCE_EXHAUSTED from gRPC, before the service sees it") {
    RequestBuilder request = ThreeGroups(Layout::kBytes);
    request.option("p4d", 1, {trainer});
    const int64_t target = int64_t{kMaxReceiveBytes} + 1;
    int64_t debug = 0;
    for (int fit = 0; fit < 4; ++fit) {  // the length prefixes grow with the string
      debug += target - static_cast<int64_t>(request.build().ByteSizeLong());
      request.build().mutable_options(0)->set_debug(std::string(static_cast<size_t>(debug), 'x'));
    }
    REQUIRE(static_cast<int64_t>(request.build().ByteSizeLong()) == target);
    ::grpcplugin::BestOptionsResponse response;
    CHECK(large_call(request.build(), &response).error_code() == ::grpc::StatusCode::RESOURCE_EXHAUSTED);
    CHECK(f.metrics.latency.Count() == 0);
    healthy();
  }
}

TEST_CASE("A call already past its deadline or cancelled is DEADLINE_EXCEEDED", "[expander]") {
  Fixture f;
  RequestBuilder request = ThreeGroups(Layout::kBytes);
  request.option("p4d", 1, {PodProto("trainer").gpus(4).nv_required()});
  CHECK_STATUS(f.Answer(request.build(), {f.clock.Now() - absl::Seconds(1), nullptr}),
               absl::StatusCode::kDeadlineExceeded, "deadline");
  CHECK_STATUS(f.Answer(request.build(), {absl::InfiniteFuture(), [] { return true; }}),
               absl::StatusCode::kDeadlineExceeded, "cancelled");
  CHECK(f.metrics.calls.Value({"deadline_exceeded"}) == 2);
  CHECK(f.ledger->Intents().empty());
}

TEST_CASE("Bytes that are not a BestOptionsRequest are INVALID_ARGUMENT with a message, and counted",
          "[expander][grpc][hostile]") {
  // With the generated handler gRPC answered INTERNAL with no message, and the call was not counted.
  Fixture f;
  auto channel = ::grpc::CreateChannel("127.0.0.1:" + std::to_string(f.server->port()), f.TlsCredentials());
  ::grpc::GenericStub stub(channel);
  const std::string garbage = "\x0a\xff\xff\xff\xff\x0f not protobuf";  // a length past the end
  ::grpc::ByteBuffer response;
  const ::grpc::Status status = testing::RawBestOptions(stub, garbage, &response);
  CHECK(status.error_code() == ::grpc::StatusCode::INVALID_ARGUMENT);
  CHECK_THAT(status.error_message(), Catch::Contains("is not a grpcplugin.BestOptionsRequest message"));
  CHECK(f.metrics.calls.Value({"invalid_argument"}) == 1);
  // The server goes on serving.
  RequestBuilder valid = ThreeGroups(Layout::kBytes);
  valid.option("p4d", 1, {PodProto("trainer").gpus(4).nv_required()});
  ::grpcplugin::BestOptionsResponse reply;
  REQUIRE(f.Call(valid.build(), &reply).ok());
  CHECK(Ids(reply) == std::vector<std::string>{"p4d"});
}

TEST_CASE("A nodeCount beyond any cluster is INVALID_ARGUMENT before anything is sized from it",
          "[expander][grpc][hostile]") {
  // 10,000,000 peaked at 2.3 GB and worked 11 s past CA's deadline (issue 15).
  Fixture f;
  for (int count : {10'000'000, kMaxNodeCount + 1, -1}) {
    CAPTURE(count);
    RequestBuilder request = ThreeGroups(Layout::kBytes);
    request.option("p4d", 1, {PodProto("trainer").gpus(4)}).option("g5", count, {PodProto("trainer").gpus(4)});
    ::grpcplugin::BestOptionsResponse response;
    const ::grpc::Status status = f.Call(request.build(), &response);
    CHECK(status.error_code() == ::grpc::StatusCode::INVALID_ARGUMENT);
    CHECK_THAT(status.error_message(), Catch::Contains(absl::StrCat("options[1].nodeCount ", count, " is outside 0..15000")));
  }
  CHECK(f.metrics.calls.Value({"invalid_argument"}) == 3);
  CHECK(f.ledger->Intents().empty());
  RequestBuilder largest = ThreeGroups(Layout::kBytes);
  largest.option("p4d", kMaxNodeCount, {PodProto("trainer").gpus(4).nv_required()});
  REQUIRE_OK(f.Answer(largest.build(), {absl::InfiniteFuture(), nullptr}));
}

TEST_CASE("The ranking stops between options once the deadline passes: DEADLINE_EXCEEDED, no intent",
          "[expander][hostile]") {
  Fixture f;
  RequestBuilder request(Layout::kBytes);
  const PodProto trainer = PodProto("trainer").gpus(4).nv_required();
  for (int i = 0; i < 1'000; ++i) {
    const std::string id = "p4d-" + std::to_string(i);
    request.group(id, NodeProto(id).instance_type("p4d.24xlarge").gpus(8)).option(id, 2, {trainer});
  }
  // The deadline passes (the caller goes) while the ranking runs: after the check on arrival and 10 options.
  int asked = 0;
  const CallDeadline deadline{absl::InfiniteFuture(), [&asked] { return ++asked > 11; }};
  CHECK_STATUS(f.Answer(request.build(), deadline), absl::StatusCode::kDeadlineExceeded,
               "past the call's deadline");
  CHECK(asked < 20);  // not once per option of the 1,000
  CHECK(f.metrics.calls.Value({"deadline_exceeded"}) == 1);
  CHECK(f.ledger->Intents().empty());
}

TEST_CASE("The ranking stops inside one option too, once the deadline passes", "[expander][hostile]") {
  // Each pod first tries the partly filled nodes before a fresh one: at CA's largest node count and a few
  // thousand pods that each leave a GPU no later pod can use, tens of millions of nodes tried in one option
  // (the refused ones skipped by their free GPUs, but each tried). The deadline was asked only between
  // options, so such a call worked on for seconds past it.
  Fixture f;
  std::vector<corev1::Pod> pods;
  for (int i = 0; i < 1'000; ++i) pods.push_back(PodProto(absl::StrCat("seven-", i)).gpus(7));  // one GPU left each
  RequestBuilder request = ThreeGroups(Layout::kBytes);
  request.option("p4d", 1'000, pods);
  SECTION("asked while the option's pods are placed") {
    int asked = 0;
    REQUIRE_OK(f.Answer(request.build(), {absl::InfiniteFuture(), [&asked] { return ++asked < 0; }}));
    CHECK(asked > 100);  // 500,000 nodes tried, asked every 4,096 of them
  }
  SECTION("and stopped there") {
    // On arrival, before the option, after 4,096 placements: no; after 8,192: yes.
    int asked = 0;
    CHECK_STATUS(f.Answer(request.build(), {absl::InfiniteFuture(), [&asked] { return ++asked > 3; }}),
                 absl::StatusCode::kDeadlineExceeded, "past the call's deadline");
    CHECK(asked == 5);  // and once more by the service, which discards the unfinished ranking
    CHECK(f.metrics.calls.Value({"deadline_exceeded"}) == 1);
    CHECK(f.ledger->Intents().empty());
  }
}

TEST_CASE("TLS is enforced", "[expander][grpc][tls]") {
  const PodProto web = PodProto("web");
  SECTION("a plaintext client cannot call the TLS server") {
    Fixture f;
    RequestBuilder request = ThreeGroups(Layout::kBytes);
    request.option("cpu", 1, {web});
    ::grpcplugin::BestOptionsResponse response;
    CHECK_FALSE(f.Call(request.build(), &response, ::grpc::InsecureChannelCredentials()).ok());
    CHECK(f.metrics.latency.Count() == 0);
  }
  SECTION("with a client CA, only clients with a certificate it signed get through") {
    GrpcServerOptions server_options;
    Fixture f({}, server_options);
    // Restart with mTLS, on the fixture's certificates.
    f.server.reset();
    server_options.address = "127.0.0.1";
    server_options.port = 0;
    server_options.tls_cert_file = f.certs->server_cert_file();
    server_options.tls_key_file = f.certs->server_key_file();
    server_options.tls_client_ca_file = f.certs->ca_cert_file();
    absl::StatusOr<std::unique_ptr<GrpcServer>> mtls = GrpcServer::Start(server_options, *f.service);
    REQUIRE_OK(mtls);
    f.server = *std::move(mtls);
    RequestBuilder request = ThreeGroups(Layout::kBytes);
    request.option("cpu", 1, {web});
    ::grpcplugin::BestOptionsResponse response;
    CHECK_FALSE(f.Call(request.build(), &response, f.TlsCredentials(/*client_cert=*/false)).ok());
    const ::grpc::Status with_cert = f.Call(request.build(), &response, f.TlsCredentials(/*client_cert=*/true));
    INFO(with_cert.error_message());
    CHECK(with_cert.ok());
    CHECK(Ids(response) == std::vector<std::string>{"cpu"});
  }
}

TEST_CASE("TLS: a renewed certificate is served to new connections without a restart, each reload counted",
          "[expander][grpc][tls]") {
  // Before the fixture, so that they outlive its server: the server's watcher counts reloads into them until
  // it stops, and the Secret's files go away before that (a failed reload, counted; once a use after free,
  // under load).
  server::MetricsRegistry registry;
  server::Counter& reloads = server::TlsReloadsCounter(registry);
  Fixture f;
  f.server.reset();
  const std::unique_ptr<testing::TestCerts> renewed = testing::TestCerts::Create(1002).value();
  const std::unique_ptr<testing::TestCerts> renewed_again = testing::TestCerts::Create(2003).value();
  testing::MountedSecret secret(f.certs->dir() + "/mounted");
  secret.Update(f.certs->server_cert_file(), f.certs->server_key_file());  // serial 2
  GrpcServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.tls_cert_file = secret.cert();
  options.tls_key_file = secret.key();
  options.tls_reload_interval = absl::Seconds(1);  // gRPC's shortest
  options.on_tls_reload = server::ReportTlsReloads(reloads, "expander");
  absl::StatusOr<std::unique_ptr<GrpcServer>> started = GrpcServer::Start(options, *f.service);
  REQUIRE_OK(started);
  f.server = *std::move(started);
  const int port = f.server->port();
  CHECK(testing::ServedCertificateSerial(port) == 2);

  const auto serves = [port](long serial) {
    long served = 0;
    for (int i = 0; i < 50 && served != serial; ++i) {  // topofit, then gRPC, look every second
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      served = testing::ServedCertificateSerial(port);
    }
    return served;
  };
  const auto counted = [&reloads](const char* result, int64_t count) {
    for (int i = 0; i < 50 && reloads.Value({"expander", result}) < count; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return reloads.Value({"expander", result});
  };
  // A call from a client that verifies the server against `certs`' CA.
  const auto calls = [&f](const testing::TestCerts& certs) {
    ::grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = Fixture::Read(certs.ca_cert_file());
    RequestBuilder request = ThreeGroups(Layout::kBytes);
    request.option("cpu", 1, {PodProto("web")});
    ::grpcplugin::BestOptionsResponse response;
    const ::grpc::Status status = f.Call(request.build(), &response, ::grpc::SslCredentials(ssl));
    INFO(status.error_message());
    return status.ok();
  };
  secret.Update(renewed->server_cert_file(), renewed->server_key_file());  // cert-manager renewed it
  CHECK(serves(1002) == 1002);
  CHECK(counted("ok", 1) == 1);  // topofit_tls_reloads_total{server="expander",result="ok"}
  CHECK(calls(*renewed));

  // A certificate with another's key: counted as failed (and logged), never handed to gRPC, which keeps
  // serving the renewed pair, as the HTTPS servers do.
  secret.Update(renewed_again->server_cert_file(), f.certs->server_key_file());
  CHECK(counted("failed", 1) == 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // gRPC has looked at its files twice since
  CHECK(testing::ServedCertificateSerial(port) == 1002);
  CHECK(calls(*renewed));
  CHECK(reloads.Value({"expander", "ok"}) == 1);

  // Good files again: served.
  secret.Update(renewed_again->server_cert_file(), renewed_again->server_key_file());
  CHECK(serves(2003) == 2003);
  CHECK(counted("ok", 2) == 2);
  CHECK(calls(*renewed_again));
  CHECK(reloads.Value({"expander", "failed"}) == 1);
}

TEST_CASE("TLS: 1.2 with forward-secret AEAD suites and 1.3 only, as the HTTPS servers", "[expander][grpc][tls]") {
  Fixture f;
  const int port = f.server->port();
  CHECK(testing::TlsHandshakes(port, *f.certs, TLS1_3_VERSION, TLS1_3_VERSION, nullptr));
  CHECK(testing::TlsHandshakes(port, *f.certs, TLS1_2_VERSION, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256"));
  // Key exchange without forward secrecy, CBC with SHA-1 or SHA-256 (not AEAD), and TLS 1.1, are refused.
  CHECK(!testing::TlsHandshakes(port, *f.certs, TLS1_2_VERSION, TLS1_2_VERSION, "AES128-GCM-SHA256"));
  CHECK(!testing::TlsHandshakes(port, *f.certs, TLS1_2_VERSION, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA"));
  CHECK(!testing::TlsHandshakes(port, *f.certs, TLS1_2_VERSION, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA256"));
  CHECK(!testing::TlsHandshakes(port, *f.certs, TLS1_VERSION, TLS1_1_VERSION, "ALL:@SECLEVEL=0"));

  SECTION("an environment that would change gRPC's suites is refused at start") {
    ::setenv("GRPC_SSL_CIPHER_SUITES", "ALL", 1);
    GrpcServerOptions options;
    options.address = "127.0.0.1";
    options.tls_cert_file = f.certs->server_cert_file();
    options.tls_key_file = f.certs->server_key_file();
    const absl::StatusOr<std::unique_ptr<GrpcServer>> started = GrpcServer::Start(options, *f.service);
    ::unsetenv("GRPC_SSL_CIPHER_SUITES");
    CHECK_STATUS(started, absl::StatusCode::kInvalidArgument, "GRPC_SSL_CIPHER_SUITES is set (\"ALL\")");
  }
}

TEST_CASE("Bad server options are errors naming the problem, not aborts", "[expander][tls]") {
  absl::StatusOr<std::unique_ptr<testing::TestCerts>> made = testing::TestCerts::Create();
  REQUIRE_OK(made);
  const testing::TestCerts& certs = **made;
  server::RealClock clock;
  auto ledger = ledger::NewInMemoryLedger(clock, {absl::Minutes(1), absl::Minutes(1)});
  server::MetricsRegistry registry;
  ExpanderMetrics metrics = ExpanderMetrics::Create(registry);
  auto log = server::MakeLogger("expander-test", {}, std::make_shared<spdlog::sinks::ostream_sink_mt>(std::cerr));
  ExpanderService service({}, *ledger, clock, metrics, *log);

  struct Row {
    const char* name;
    std::function<void(GrpcServerOptions&)> change;
    const char* message;
  };
  const Row rows[] = {
      {"neither TLS nor --insecure", [](GrpcServerOptions&) {}, "--insecure"},
      {"--insecure with a certificate",
       [&](GrpcServerOptions& o) { o.insecure = true, o.tls_cert_file = certs.server_cert_file(); }, "excludes"},
      {"certificate without key", [&](GrpcServerOptions& o) { o.tls_cert_file = certs.server_cert_file(); },
       "--tls-key"},
      {"unreadable certificate",
       [&](GrpcServerOptions& o) { o.tls_cert_file = "/nonexistent.pem", o.tls_key_file = certs.server_key_file(); },
       "/nonexistent.pem: cannot be read"},
      {"a key for another certificate",
       [&](GrpcServerOptions& o) {
         o.tls_cert_file = certs.server_cert_file(), o.tls_key_file = certs.stranger_key_file();
       },
       "does not belong to certificate"},
      {"a key file that is a certificate",
       [&](GrpcServerOptions& o) {
         o.tls_cert_file = certs.server_cert_file(), o.tls_key_file = certs.server_cert_file();
       },
       "no PEM private key"},
      {"a client CA that is not PEM",
       [&](GrpcServerOptions& o) {
         o.tls_cert_file = certs.server_cert_file(), o.tls_key_file = certs.server_key_file();
         o.tls_client_ca_file = certs.server_key_file();
       },
       "TLS client CA"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      GrpcServerOptions options;
      options.address = "127.0.0.1";
      options.port = 0;
      row.change(options);
      CHECK_STATUS(GrpcServer::Start(options, service), absl::StatusCode::kInvalidArgument, row.message);
    }
  }
}

TEST_CASE("a second expander on a port another server holds fails to start instead of sharing it", "[expander][grpc]") {
  // gRPC sets SO_REUSEPORT by default: two expanders on one port would both listen and split CA's calls.
  Fixture f;
  GrpcServerOptions options;
  options.address = "127.0.0.1";
  options.port = f.server->port();
  options.tls_cert_file = f.certs->server_cert_file();
  options.tls_key_file = f.certs->server_key_file();
  CHECK_STATUS(GrpcServer::Start(options, *f.service), absl::StatusCode::kUnavailable, "could not listen");
}

}  // namespace
}  // namespace topofit::expander
