// The expander measured over gRPC + TLS, as cluster-autoscaler drives it: the real service
// (expander/expander_service.h) behind the real server (expander/grpc_server.h) stands up in-process on
// 127.0.0.1 with throwaway certificates (tests/server/test_certs.h), and one TLS client on one channel
// (CA keeps its connection) calls /grpcplugin.Expander/BestOptions with CA's 5 s deadline, one call at a
// time, its request serialized before the clock starts (CA serializes before it calls). Each call is
// followed by the same request to a floor server that reads nothing and answers an empty reply, behind the
// same gRPC server and TLS: the transport's share, measured in the same run (floor columns). Not Google
// Benchmark: the unit is an RPC to a server with its own threads; the output is a latency distribution.
//
// Input (deterministic), laid out as CA >= 1.35 sends it (bytes fields only):
//   - G node groups; group i's template is a protobuf corev1.Node in nodeBytesMap, instance type cycling
//     through p4d.24xlarge (8 GPUs), p5.48xlarge (8), g5.48xlarge (8), g4dn.12xlarge (4), g6.48xlarge (8),
//     allocatable cpu 96 / memory 1100Gi / pods 110 / nvidia.com/gpu, with what a running node's copy
//     carries besides (16 labels, conditions, addresses, images, managed fields: about 4 KB); as CA does,
//     every call names every template anew (`template-node-for-<id>-<random>`, the hostname label, a uid),
//     and a group's Ready condition gets a new heartbeat in one call of 30 (the kubelet's 5-minute report);
//   - 1,000 pending pods, pod j asks for 1/2/4/8 GPUs (j % 4) and 8 CPUs; every third (j % 3 == 0) carries
//     topofit.io/min-link: NV with topofit.io/topology-policy: required;
//   - one option per group, in podBytes the n = min(1000, 1000 * 8 / G) pods that would fit the group
//     (GPUs per pod <= GPUs per node), taken in circular order from offset i * 1000 / G, so the 1,000 pods
//     are spread over the options; nodeCount = ceil(GPUs asked / GPUs per node), as CA's bin-packing
//     estimator would answer for these power-of-two requests.
//
// Besides the RPC, an in-process split of one call's server-side work: reading the request's bytes and
// decoding them (codec::ReadBestOptions and DecodeBestOptions, with the caches the service keeps across
// calls, templates named anew) vs RankOptions, timed on the same request.
//
//   expander_bench [--quick] [--iterations=N] [--groups=10,100,500] [--dump=PATH]
//
// --dump writes every shape's reply and every verdict of its ranking to PATH as text: two builds given the
// same flags must write the same file (how a speed-up shows it changed no decision).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <google/protobuf/unknown_field_set.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/security/credentials.h>
#include <spdlog/sinks/null_sink.h>

#include "codec/kube_proto.h"
#include "proto/k8s_meta_v1.pb.h"
#include "codec/node_topology.h"
#include "decision/group_rank.h"
#include "expander/expander_service.h"
#include "expander/grpc_server.h"
#include "history/recorder.h"
#include "history/store.h"
#include "ledger/ledger.h"
#include "server/clock.h"
#include "server/logging.h"
#include "server/metrics.h"
#include "tests/expander/raw_best_options.h"
#include "tests/server/test_certs.h"

namespace {

namespace corev1 = ::k8s::io::api::core::v1;
using topofit::expander::ExpanderMetrics;
using topofit::expander::ExpanderService;
using topofit::expander::GrpcServer;
using topofit::expander::GrpcServerOptions;

constexpr int kPods = 1000;

struct InstanceType {
  const char* name;
  int gpus;
};
constexpr InstanceType kTypes[] = {
    {"p4d.24xlarge", 8}, {"p5.48xlarge", 8}, {"g5.48xlarge", 8}, {"g4dn.12xlarge", 4}, {"g6.48xlarge", 8}};

void Set(corev1::Node& node, const std::string& resource, const std::string& quantity) {
  (*node.mutable_status()->mutable_allocatable())[resource].set_string(quantity);
  (*node.mutable_status()->mutable_capacity())[resource].set_string(quantity);
}

// A template as CA builds one from a running node of the group (SanitizedTemplateNodeInfoFromNodeInfo): the
// node's labels, annotations, conditions, addresses, images and managed fields, under a name and uid CA
// makes anew on every loop (NameTemplate). Fields the decoder does not read are written as unknown fields
// of their upstream numbers, as a real node's bytes carry them.
corev1::Node TemplateNode(const std::string& group, const InstanceType& type, int index) {
  corev1::Node node;
  auto& labels = *node.mutable_metadata()->mutable_labels();
  labels["node.kubernetes.io/instance-type"] = type.name;
  labels["beta.kubernetes.io/instance-type"] = type.name;
  labels["kubernetes.io/arch"] = labels["beta.kubernetes.io/arch"] = "amd64";
  labels["kubernetes.io/os"] = labels["beta.kubernetes.io/os"] = "linux";
  const std::string zone = std::string("us-east-1") + static_cast<char>('a' + index % 4);
  labels["topology.kubernetes.io/zone"] = labels["failure-domain.beta.kubernetes.io/zone"] = zone;
  labels["topology.kubernetes.io/region"] = labels["failure-domain.beta.kubernetes.io/region"] = "us-east-1";
  labels["eks.amazonaws.com/nodegroup"] = group;
  labels["eks.amazonaws.com/capacityType"] = "ON_DEMAND";
  labels["nvidia.com/gpu.present"] = "true";
  labels["nvidia.com/gpu.count"] = std::to_string(type.gpus);
  auto& annotations = *node.mutable_metadata()->mutable_annotations();
  annotations["node.alpha.kubernetes.io/ttl"] = "0";
  annotations["volumes.kubernetes.io/controller-managed-attach-detach"] = "true";
  node.mutable_metadata()->set_resourceversion("48213377");
  node.mutable_metadata()->mutable_creationtimestamp()->set_seconds(1764000000 + index);
  Set(node, "cpu", "96");
  Set(node, "memory", "1100Gi");
  Set(node, "pods", "110");
  Set(node, "ephemeral-storage", "7650130Mi");
  Set(node, "hugepages-1Gi", "0");
  Set(node, "hugepages-2Mi", "0");
  Set(node, "nvidia.com/gpu", std::to_string(type.gpus));
  for (const char* condition : {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"}) {
    corev1::NodeCondition* c = node.mutable_status()->add_conditions();
    c->set_type(condition);
    c->set_status(std::string(condition) == "Ready" ? "True" : "False");
    c->set_reason(std::string("Kubelet") + (std::string(condition) == "Ready" ? "Ready" : "HasSufficient"));
  }
  google::protobuf::UnknownFieldSet& status = *node.mutable_status()->mutable_unknown_fields();
  status.AddLengthDelimited(5, "\x0a\x0aInternalIP\x12\x0c" "10.0.12.34");                // addresses
  status.AddLengthDelimited(7, std::string(180, 'i'));                                 // nodeInfo
  for (int image = 0; image < 20; ++image) status.AddLengthDelimited(8, std::string(120, 'm'));  // images
  node.mutable_metadata()->mutable_unknown_fields()->AddLengthDelimited(17, std::string(600, 'f'));  // managedFields
  return node;
}

// What CA makes anew for every template on every loop: the name `template-node-for-<id>-<random>` (the
// kubernetes.io/hostname label set to it) and a fresh uid. And what changes under the running node it copies:
// the kubelet reports an unchanged status every 5 minutes (nodeStatusReportFrequency) with a new heartbeat,
// so in one call of 30 (CA loops every 10 s) a group's template carries a new Ready heartbeat, the groups'
// reports spread over the 30. Deterministic per (group, call).
void NameTemplate(corev1::Node& node, const std::string& group, uint64_t call) {
  const uint64_t report = (call + std::hash<std::string>{}(group) % 30) / 30;
  ::k8s::io::apimachinery::pkg::apis::meta::v1::Time heartbeat;
  heartbeat.set_seconds(static_cast<int64_t>(1764000000 + report * 300));
  google::protobuf::UnknownFieldSet& ready = *node.mutable_status()->mutable_conditions(3)->mutable_unknown_fields();
  ready.Clear();
  ready.AddLengthDelimited(3, heartbeat.SerializeAsString());  // lastHeartbeatTime
  std::mt19937_64 random(std::hash<std::string>{}(group) ^ (call * 0x9e3779b97f4a7c15ULL));
  const std::string name = "template-node-for-" + group + "-" + std::to_string(random() >> 1);
  node.mutable_metadata()->set_name(name);
  (*node.mutable_metadata()->mutable_labels())["kubernetes.io/hostname"] = name;
  char uid[40];
  std::snprintf(uid, sizeof uid, "%08llx-%04llx-4%03llx-a%03llx-%012llx", static_cast<unsigned long long>(random() >> 32),
                static_cast<unsigned long long>(random() >> 48), static_cast<unsigned long long>(random() >> 52),
                static_cast<unsigned long long>(random() >> 52), static_cast<unsigned long long>(random() >> 16));
  node.mutable_metadata()->set_uid(uid);
}

int PodGpus(int j) { return 1 << (j % 4); }

std::string PodBytes(int j) {
  corev1::Pod pod;
  const std::string name = "trainer-" + std::to_string(j);
  pod.mutable_metadata()->set_name(name);
  pod.mutable_metadata()->set_namespace_("ml");
  pod.mutable_metadata()->set_uid("uid-" + name);
  if (j % 3 == 0) {
    (*pod.mutable_metadata()->mutable_annotations())["topofit.io/min-link"] = "NV";
    (*pod.mutable_metadata()->mutable_annotations())["topofit.io/topology-policy"] = "required";
  }
  corev1::Container* container = pod.mutable_spec()->add_containers();
  container->set_name("main");
  const std::string gpus = std::to_string(PodGpus(j));
  (*container->mutable_resources()->mutable_requests())["cpu"].set_string("8");
  (*container->mutable_resources()->mutable_requests())["nvidia.com/gpu"].set_string(gpus);
  (*container->mutable_resources()->mutable_limits())["nvidia.com/gpu"].set_string(gpus);
  return pod.SerializeAsString();
}

struct Shape {
  ::grpcplugin::BestOptionsRequest request;
  std::vector<std::pair<std::string, corev1::Node>> templates;  // by group id; named anew per call
  size_t total_pod_entries = 0;
  int per_option = 0;
};

Shape BuildRequest(int groups, const std::vector<std::string>& pods) {
  Shape shape;
  shape.per_option = std::min(kPods, kPods * 8 / groups);
  for (int i = 0; i < groups; ++i) {
    const InstanceType& type = kTypes[i % 5];
    const std::string id = "ng-" + std::string(type.name) + "-" + std::to_string(i);
    shape.templates.emplace_back(id, TemplateNode(id, type, i));
    ::grpcplugin::Option* option = shape.request.add_options();
    option->set_nodegroupid(id);
    int taken = 0, gpus = 0;
    for (int k = 0; k < kPods && taken < shape.per_option; ++k) {
      const int j = (i * kPods / groups + k) % kPods;
      if (PodGpus(j) > type.gpus) continue;
      option->add_podbytes(pods[j]);
      ++taken;
      gpus += PodGpus(j);
    }
    option->set_nodecount((gpus + type.gpus - 1) / type.gpus);
    option->set_debug("estimator packed " + std::to_string(taken) + " pods");
    shape.total_pod_entries += static_cast<size_t>(taken);
  }
  return shape;
}

// The request of call `call`: every template under its name for that loop.
void NameTemplates(Shape& shape, uint64_t call) {
  for (auto& [id, node] : shape.templates) {
    NameTemplate(node, id, call);
    (*shape.request.mutable_nodebytesmap())[id] = node.SerializeAsString();
  }
}

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

double Percentile(std::vector<double> v, double p) {  // nearest rank
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(p / 100.0 * static_cast<double>(v.size()) + 0.999999);
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

// One line per option of the reply, then one per verdict, every field: what --dump compares across builds.
void DumpReply(std::ostream& out, int groups, const ::grpcplugin::BestOptionsResponse& response) {
  out << groups << " groups: reply of " << response.options_size() << " options\n";
  for (const ::grpcplugin::Option& option : response.options()) {
    out << "  option " << option.nodegroupid() << " nodeCount " << option.nodecount() << " debug " << option.debug()
        << " pods " << option.podbytes_size() + option.pod_size() << "\n";
  }
}

void DumpRanking(std::ostream& out, int groups, const topofit::decision::Ranking& ranking) {
  out << groups << " groups: chosen";
  for (const std::string& id : ranking.chosen) out << " " << id;
  out << "; veto " << ranking.veto << " by_price " << ranking.by_price << "\n";
  char useful[64], price[64], worth[64];
  for (const topofit::decision::OptionVerdict& v : ranking.verdicts) {
    std::snprintf(useful, sizeof useful, "%.17g", v.useful_gpus);
    std::snprintf(price, sizeof price, "%.17g", v.price);
    std::snprintf(worth, sizeof worth, "%.17g", v.pods_worth);
    out << "  " << v.node_group_id << " needs_gpus " << v.needs_gpus << " strands " << v.strands << " reason \""
        << v.reason << "\" preferences " << v.preferences_satisfied << " quality " << v.quality_per_mille
        << " provisioned " << v.provisioned_gpus << " idle " << v.idle_gpus << " useful " << useful << " placed "
        << v.placed_pods << " price " << price << " worth " << worth << " unplaced";
    for (const std::string& pod : v.unplaced_pods) out << " " << pod;
    out << " met";
    for (const std::string& uid : v.topology_met) out << " " << uid;
    out << "\n";
  }
}

double Ms(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The transport floor: a BestOptions that reads nothing and answers an empty reply, behind the same server
// and TLS. What a call costs above it is the expander's own work (parsing included).
class FloorService final
    : public ::grpcplugin::Expander::WithRawCallbackMethod_BestOptions<::grpcplugin::Expander::Service> {
 public:
  ::grpc::ServerUnaryReactor* BestOptions(::grpc::CallbackServerContext* context, const ::grpc::ByteBuffer*,
                                          ::grpc::ByteBuffer* response) override {
    ::grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    bool own_buffer = false;
    reactor->Finish(::grpc::SerializationTraits<::grpcplugin::BestOptionsResponse>::Serialize(
        ::grpcplugin::BestOptionsResponse(), response, &own_buffer));
    return reactor;
  }
};

// One call with the request serialized beforehand (CA serializes before it calls): its milliseconds, the
// reply into `response`.
double TimedCall(::grpc::GenericStub& stub, const std::string& request_bytes, ::grpcplugin::BestOptionsResponse& response,
                 ::grpc::Status& status) {
  ::grpc::ByteBuffer reply;
  const auto start = std::chrono::steady_clock::now();
  status = topofit::testing::RawBestOptions(stub, request_bytes, &reply);
  const double ms = Ms(std::chrono::steady_clock::now() - start);
  response.Clear();
  if (status.ok() && !::grpc::GenericDeserialize<::grpc::ProtoBufferReader, ::grpcplugin::BestOptionsResponse>(
                          &reply, &response).ok()) {
    status = ::grpc::Status(::grpc::StatusCode::INTERNAL, "the reply is not a BestOptionsResponse");
  }
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 50;
  std::vector<int> group_counts = {10, 100, 500};
  std::string decision_db;  // record decisions here (":memory:": in memory); empty: not recorded
  std::string dump_path;    // replies and verdicts written here; empty: not written
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg.rfind("--decision-db=", 0) == 0 && arg.size() > 14) {
      decision_db = arg.substr(14);
    } else if (arg.rfind("--dump=", 0) == 0 && arg.size() > 7) {
      dump_path = arg.substr(7);
    } else if (arg == "--quick") {
      iterations = 10;
    } else if (arg.rfind("--iterations=", 0) == 0) {
      iterations = std::max(1, std::atoi(arg.c_str() + 13));
    } else if (arg.rfind("--groups=", 0) == 0) {
      group_counts.clear();
      std::stringstream list(arg.substr(9));
      std::string item;
      while (std::getline(list, item, ',')) group_counts.push_back(std::atoi(item.c_str()));
    } else {
      std::fprintf(stderr,
                   "usage: expander_bench [--quick] [--iterations=N] [--groups=10,100,500] "
                   "[--decision-db=PATH|:memory:] [--dump=PATH]\n");
      return 2;
    }
  }

  auto certs = topofit::testing::TestCerts::Create();
  if (!certs.ok()) {
    std::fprintf(stderr, "certs: %s\n", certs.status().ToString().c_str());
    return 2;
  }
  topofit::server::RealClock clock;
  std::unique_ptr<topofit::ledger::Ledger> ledger =
      topofit::ledger::NewInMemoryLedger(clock);
  topofit::server::MetricsRegistry registry;
  ExpanderMetrics metrics = ExpanderMetrics::Create(registry);
  // Info level as in production (one best_options record per call is formatted), written nowhere.
  std::shared_ptr<spdlog::logger> log = topofit::server::MakeLogger(
      "expander-bench", {topofit::server::LogFormat::kJson, spdlog::level::info},
      std::make_shared<spdlog::sinks::null_sink_mt>());
  ExpanderService service({}, *ledger, clock, metrics, *log);
  // With --decision-db, rankings and intents are recorded as `topofit expander` records them.
  std::unique_ptr<topofit::history::DecisionStore> decisions;
  std::unique_ptr<topofit::history::AsyncRecorder> recorder;
  if (!decision_db.empty()) {
    auto opened = topofit::history::DecisionStore::Open(decision_db == ":memory:" ? "" : decision_db);
    if (!opened.ok()) {
      std::fprintf(stderr, "--decision-db: %s\n", opened.status().ToString().c_str());
      return 2;
    }
    decisions = *std::move(opened);
    recorder = std::make_unique<topofit::history::AsyncRecorder>(*decisions);
    service.RecordDecisionsTo(recorder.get());
  }
  std::printf("Decisions recorded: %s\n", decision_db.empty() ? "no" : decision_db.c_str());
  GrpcServerOptions server_options;
  server_options.address = "127.0.0.1";
  server_options.port = 0;
  server_options.tls_cert_file = (*certs)->server_cert_file();
  server_options.tls_key_file = (*certs)->server_key_file();
  auto server = GrpcServer::Start(server_options, service);
  if (!server.ok()) {
    std::fprintf(stderr, "server: %s\n", server.status().ToString().c_str());
    return 2;
  }

  ::grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = Read((*certs)->ca_cert_file());
  ::grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(-1);
  args.SetMaxReceiveMessageSize(-1);
  auto channel = ::grpc::CreateCustomChannel("127.0.0.1:" + std::to_string((*server)->port()),
                                             ::grpc::SslCredentials(ssl), args);
  // Generic: CA serializes its request before the call, so the bench does that untimed and times the call.
  ::grpc::GenericStub stub(channel);
  FloorService floor_service;
  GrpcServerOptions floor_options = server_options;
  auto floor_server = GrpcServer::Start(floor_options, floor_service);
  if (!floor_server.ok()) {
    std::fprintf(stderr, "floor server: %s\n", floor_server.status().ToString().c_str());
    return 2;
  }
  ::grpc::GenericStub floor_stub(::grpc::CreateCustomChannel("127.0.0.1:" + std::to_string((*floor_server)->port()),
                                                             ::grpc::SslCredentials(ssl), args));

  std::vector<std::string> pods;
  pods.reserve(kPods);
  for (int j = 0; j < kPods; ++j) pods.push_back(PodBytes(j));

  std::printf("expander_bench: BestOptions over TLS on 127.0.0.1:%d, %d timed calls per shape (+2 warm-up)\n",
              (*server)->port(), iterations);
  std::printf("%7s %8s %10s %10s %9s %9s %9s %9s %11s %11s %8s %12s %12s\n", "groups", "pods/opt", "pod entries",
              "req bytes", "p50 ms", "p99 ms", "max ms", "mean ms", "decode ms", "rank ms", "reply", "floor p50 ms",
              "floor p99 ms");
  std::ofstream dump;
  if (!dump_path.empty()) dump.open(dump_path);
  bool failed = false;
  for (int groups : group_counts) {
    if (groups <= 0) continue;
    Shape shape = BuildRequest(groups, pods);
    std::vector<double> rpc_ms;
    int reply_options = 0;
    std::vector<double> floor_ms;
    for (int it = 0; it < iterations + 2; ++it) {
      // CA's side, untimed: the loop's templates named, the request serialized.
      NameTemplates(shape, static_cast<uint64_t>(it));
      const std::string bytes = shape.request.SerializeAsString();
      ::grpcplugin::BestOptionsResponse response;
      ::grpc::Status status;
      const double ms = TimedCall(stub, bytes, response, status);
      if (!status.ok()) {
        std::fprintf(stderr, "%d groups: call failed: %d %s\n", groups, static_cast<int>(status.error_code()),
                     status.error_message().c_str());
        failed = true;
        break;
      }
      reply_options = response.options_size();
      if (it == 0 && dump.is_open()) DumpReply(dump, groups, response);
      const double floor = TimedCall(floor_stub, bytes, response, status);  // alternating with the real call
      if (it >= 2) {
        rpc_ms.push_back(ms);
        if (status.ok()) floor_ms.push_back(floor);
      }
    }
    if (rpc_ms.empty()) continue;

    // Server-side split, in-process: decode (with caches across calls, as the service keeps them, each call's
    // templates named anew) vs RankOptions (medians). The first, cold, call is not counted.
    std::vector<double> decode_ms, rank_ms;
    topofit::codec::TopologyResolver topologies;
    topofit::codec::PodBytesCache split_pods;
    topofit::codec::NodeBytesCache split_templates;
    const int split_runs = std::max(3, iterations / 5);
    for (int it = -1; it < split_runs; ++it) {
      NameTemplates(shape, static_cast<uint64_t>(1000 + it));
      const std::string bytes = shape.request.SerializeAsString();
      const auto t0 = std::chrono::steady_clock::now();
      auto wire = topofit::codec::ReadBestOptions(bytes);
      auto decoded = wire.ok() ? topofit::codec::DecodeBestOptions(*wire, {.pods = &split_pods, .templates = &split_templates})
                               : wire.status();
      const auto t1 = std::chrono::steady_clock::now();
      if (!decoded.ok()) {
        std::fprintf(stderr, "decode: %s\n", decoded.status().ToString().c_str());
        return 2;
      }
      topofit::decision::RankInput input;
      for (auto& option : decoded->options) {
        input.options.push_back({std::move(option.node_group_id), option.node_count, std::move(option.pods)});
      }
      input.templates = std::move(decoded->templates);
      const auto t2 = std::chrono::steady_clock::now();
      const topofit::decision::Ranking ranking = topofit::decision::RankOptions(input, topologies);
      const auto t3 = std::chrono::steady_clock::now();
      if (it < 0) continue;
      decode_ms.push_back(Ms(t1 - t0));
      rank_ms.push_back(Ms(t3 - t2));
      if (ranking.verdicts.size() != static_cast<size_t>(groups)) failed = true;
      if (it == 0 && dump.is_open()) DumpRanking(dump, groups, ranking);
    }

    double sum = 0;
    for (double v : rpc_ms) sum += v;
    const bool floor_measured = !floor_ms.empty();
    std::printf("%7d %8d %10zu %10zu %9.2f %9.2f %9.2f %9.2f %11.2f %11.2f %8d %12.2f %12.2f\n", groups,
                shape.per_option, shape.total_pod_entries, shape.request.ByteSizeLong(), Percentile(rpc_ms, 50),
                Percentile(rpc_ms, 99), *std::max_element(rpc_ms.begin(), rpc_ms.end()),
                sum / static_cast<double>(rpc_ms.size()), Percentile(decode_ms, 50), Percentile(rank_ms, 50),
                reply_options, floor_measured ? Percentile(floor_ms, 50) : -1.0,
                floor_measured ? Percentile(floor_ms, 99) : -1.0);
    std::fflush(stdout);
  }
  (*server)->Shutdown(absl::Seconds(1));
  (*floor_server)->Shutdown(absl::Seconds(1));
  return failed ? 1 : 0;
}
