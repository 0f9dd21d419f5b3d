// Issue 6's end-to-end scenario, in one process, through every real component and wire: the extender's
// HTTP server and the expander's gRPC server built as `topofit serve` builds them (one ledger in memory), or as
// two Deployments with --ledger=api build them (each process its own ledger, shared through the API), the
// Kubernetes client against the fake API server (watches, Bindings, annotations, ProvisioningRequests), and
// a stand-in for cluster-autoscaler that does what CA does with a ProvisioningRequest: makes pods from its
// PodTemplate, asks the expander, and adds the chosen group's node.
//
// A pending pod wants 8 NVLink-connected GPUs; the existing nodes fit it by count only (PCIe A10Gs) or not at
// all (an A100 node mostly taken). The extender refuses them and asks for capacity; the expander picks the
// NVLink group; the new node appears; a 1-GPU pod that arrives first is kept off it; the 8-GPU pod lands there.

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <spdlog/sinks/null_sink.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/decision_history.h"
#include "cli/expander_command.h"
#include "cli/explain_command.h"
#include "cli/extender_command.h"
#include "cli/ledger_flags.h"
#include "kubeclient/api_ledger.h"
#include "proto/expander.grpc.pb.h"
#include "tests/cli/scratch_dir.h"
#include "tests/e2e/e2e_objects.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"
#include "tests/server/test_certs.h"

namespace topofit {
namespace {

using kubeclient::testing::Eventually;
using kubeclient::testing::FakeApiServer;
using kubeclient::testing::Resource;
using nlohmann::json;
namespace corev1 = ::k8s::io::api::core::v1;
using testing::TemplateNode;

constexpr char kRequestPath[] = "/apis/autoscaling.x-k8s.io/v1/namespaces/ml/provisioningrequests/topofit-trainer";
constexpr char kTemplatePath[] = "/api/v1/namespaces/ml/podtemplates/topofit-trainer";

std::string Rfc3339(absl::Time t) { return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone()); }

json GpuNode(const std::string& name, const std::string& instance_type, const std::string& node_group, int gpus,
             const std::string& created) {
  return {{"metadata",
           {{"name", name},
            {"creationTimestamp", created},
            {"labels",
             {{"kubernetes.io/hostname", name},
              {"node.kubernetes.io/instance-type", instance_type},
              {"eks.amazonaws.com/nodegroup", node_group}}}}},
          {"status",
           {{"capacity", {{"nvidia.com/gpu", std::to_string(gpus)}, {"cpu", "96"}}},
            {"allocatable", {{"nvidia.com/gpu", std::to_string(gpus)}, {"cpu", "96"}}}}}};
}

json GpuPod(const std::string& name, int gpus, bool nv_required, const std::string& node = "",
            const std::string& gpu_ids = "") {
  json pod = testing::PendingGpuPod(name, gpus, {}, Rfc3339(absl::Now()));
  if (!node.empty()) pod["status"]["phase"] = "Running";
  if (nv_required) {
    pod["metadata"]["annotations"]["topofit.io/min-link"] = "NV";
    pod["metadata"]["annotations"]["topofit.io/topology-policy"] = "required";
  }
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  if (!gpu_ids.empty()) pod["metadata"]["annotations"]["topofit.io/gpu-ids"] = gpu_ids;
  return pod;
}

struct Cluster {
  // `ledger`: "memory", both in one process as `topofit serve` runs them; "api", the expander in a process of
  // its own, each with --ledger=api. `trust_expander_templates`: the expander's flag of that name.
  explicit Cluster(const std::string& ledger, bool trust_expander_templates = false)
      : certs(testing::TestCerts::Create().value()), api(*certs) {
    // Existing capacity: a free PCIe-only g5 (8 GPUs by count, no NVLink) and a p4d with 6 of 8 GPUs taken.
    api.Upsert(Resource::kNodes, GpuNode("g5-1", "g5.48xlarge", "g5-group", 8, "2026-11-01T00:00:00Z"));
    api.Upsert(Resource::kNodes, GpuNode("p4d-busy", "p4d.24xlarge", "p4d-group", 8, "2026-11-01T00:00:00Z"));
    api.Upsert(Resource::kPods, GpuPod("resident", 6, false, "p4d-busy", "0,1,2,3,4,5"));
    api.Upsert(Resource::kPods, GpuPod("trainer", 8, true));

    cli::ExtenderOptions extender_options = testing::LoopbackExtenderOptions(scratch, api.url(), certs->ca_cert_file());
    extender_options.provisioning_requests = true;
    scratch.Write("admin-token", "e2e-admin-token\n");
    extender_options.admin_token_file = scratch.path("admin-token");
    REQUIRE(cli::UseLedger(ledger, extender_options.kubeconfig, process, log).ok());
    // The decision history: with two processes, each writes to the same file (WAL: one writer at a time).
    process.decisions = cli::OpenDecisionHistory(scratch.path("decisions.db"), extender_options.decision_db_max_bytes,
                                                 process.registry, log);
    REQUIRE(process.decisions.recorder != nullptr);
    if (ledger == "api") {
      expander_process = &separate_process;
      REQUIRE(cli::UseLedger(ledger, extender_options.kubeconfig, separate_process, log).ok());
      separate_process.decisions =
          cli::OpenDecisionHistory(scratch.path("decisions.db"), extender_options.decision_db_max_bytes,
                                   separate_process.registry, log);
      REQUIRE(separate_process.decisions.recorder != nullptr);
    }
    absl::StatusOr<cli::ExtenderServers> built = cli::BuildExtender(extender_options, process, log, {});
    REQUIRE(built.ok());
    extender = *std::move(built);
    extender_port = extender.api->Start().value();
    ops_port = extender.ops->Start().value();

    cli::ExpanderOptions expander_options;
    expander_options.address = "127.0.0.1";
    expander_options.grpc_port = 0;
    expander_options.insecure = true;
    expander_options.trust_expander_templates = trust_expander_templates;
    expander_options.ledger = ledger;  // with --ledger=api the expander writes its pods' Events too
    expander_options.kubeconfig = extender_options.kubeconfig;
    absl::StatusOr<cli::ExpanderParts> parts = cli::BuildExpander(expander_options, *expander_process, log);
    REQUIRE(parts.ok());
    expander = *std::move(parts);
    grpc = expander::GrpcServer::Start(expander.grpc, *expander.service).value();

    REQUIRE(extender.node_watch->WaitForSync(kubeclient::testing::kPatience));
    REQUIRE(extender.pod_watch->WaitForSync(kubeclient::testing::kPatience));
  }
  ~Cluster() {
    grpc->Shutdown(absl::ZeroDuration());
    extender.api->Stop();
    extender.ops->Stop();
  }

  // `topofit explain` with `source` (--db or --server): exit code, stdout.
  std::pair<int, std::string> Explain(cli::ExplainOptions options) {
    for (cli::ProcessState* p : {&process, &separate_process}) {
      if (p->decisions.recorder != nullptr) p->decisions.recorder->Flush();
    }
    std::ostringstream out, err;
    const int code = cli::RunExplain(options, out, err);
    INFO(err.str());
    return {code, out.str()};
  }

  // The Events the fake API server holds about pod `name` of namespace ml, by reason, once every process
  // has written what it queued.
  std::map<std::string, json> EventsAbout(const std::string& name) {
    for (cli::ProcessState* p : {&process, &separate_process}) {
      if (p->pod_events.recorder != nullptr) REQUIRE(p->pod_events.recorder->WaitIdle(kubeclient::testing::kPatience));
    }
    std::map<std::string, json> by_reason;
    for (const json& event : api.StoredObjects("/apis/events.k8s.io/v1/namespaces/ml/events")) {
      if (event["regarding"]["name"] == name) by_reason[event["reason"].get<std::string>()] = event;
    }
    return by_reason;
  }

  // kube-scheduler's extender call with nodeCacheCapable: false: the pod and the full Node objects.
  json Filter(const std::string& pod, const std::vector<std::string>& nodes) {
    json items = json::array();
    for (const std::string& node : nodes) items.push_back(api.Object(Resource::kNodes, "", node));
    const json args = {{"Pod", api.Object(Resource::kPods, "ml", pod)}, {"Nodes", {{"items", items}}}};
    httplib::Client client("127.0.0.1", extender_port);
    httplib::Result result = client.Post("/filter", args.dump(), "application/json");
    REQUIRE(result);
    REQUIRE(result->status == 200);
    return json::parse(result->body);
  }
  static std::vector<std::string> Passed(const json& filter_result) {
    std::vector<std::string> names;
    for (const json& node : filter_result["Nodes"]["items"]) names.push_back(node["metadata"]["name"]);
    return names;
  }
  // ExtenderBindingResult.Error: empty when bound.
  std::string Bind(const std::string& pod, const std::string& node) {
    const json args = {{"PodName", pod}, {"PodNamespace", "ml"}, {"PodUID", absl::StrCat("uid-", pod)}, {"Node", node}};
    httplib::Client client("127.0.0.1", extender_port);
    httplib::Result result = client.Post("/bind", args.dump(), "application/json");
    REQUIRE(result);
    REQUIRE(result->status == 200);
    return json::parse(result->body).value("Error", "");
  }
  ::grpcplugin::BestOptionsResponse BestOptions(const ::grpcplugin::BestOptionsRequest& request) {
    auto channel = ::grpc::CreateChannel(absl::StrCat("127.0.0.1:", grpc->port()), ::grpc::InsecureChannelCredentials());
    ::grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    ::grpcplugin::BestOptionsResponse response;
    const ::grpc::Status status = ::grpcplugin::Expander::NewStub(channel)->BestOptions(&context, request, &response);
    REQUIRE(status.ok());
    return response;
  }

  std::unique_ptr<testing::TestCerts> certs;
  FakeApiServer api;
  cli::testing::ScratchDir scratch{"topofit-e2e-test"};
  spdlog::logger log{"e2e", std::make_shared<spdlog::sinks::null_sink_mt>()};
  cli::ProcessState process;           // the extender's, and the expander's in one process
  cli::ProcessState separate_process;  // the expander's, with --ledger=api
  cli::ProcessState* expander_process = &process;
  cli::ExtenderServers extender;
  int extender_port = 0;
  int ops_port = 0;
  cli::ExpanderParts expander;
  std::unique_ptr<expander::GrpcServer> grpc;
};

TEST_CASE("A topology-refused pod gets NVLink capacity through CA, and keeps it from a 1-GPU latecomer", "[e2e]") {
  const std::string ledger = GENERATE(as<std::string>(), "memory", "api");
  INFO("--ledger=" << ledger);
  Cluster cluster(ledger);

  // 1. kube-scheduler offers the g5 (p4d-busy has 2 free GPUs: its own count filter drops it). Refused.
  const json refused = cluster.Filter("trainer", {"g5-1"});
  CHECK(Cluster::Passed(refused).empty());
  CHECK(refused["FailedAndUnresolvableNodes"].contains("g5-1"));

  // 2. A ProvisioningRequest for it, its template confined to the shape that gives its NVLink set and
  // excluding the refused node, consumed by the pod.
  REQUIRE(Eventually([&] {
    return cluster.api.Object(Resource::kPods, "ml", "trainer")["metadata"]["annotations"].contains(
        "autoscaling.x-k8s.io/consume-provisioning-request");
  }));
  const json request = cluster.api.StoredObject(kRequestPath);
  const json pod_template = cluster.api.StoredObject(kTemplatePath);
  REQUIRE(request.is_object());
  REQUIRE(pod_template.is_object());
  CHECK(request["spec"]["provisioningClassName"] == "best-effort-atomic-scale-up.autoscaling.x-k8s.io");
  CHECK(pod_template["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                    ["nodeSelectorTerms"] ==
        json::array({{{"matchExpressions",
                       {{{"key", "node.kubernetes.io/instance-type"}, {"operator", "In"}, {"values", {"p4d.24xlarge"}}},
                        {{"key", "kubernetes.io/hostname"}, {"operator", "NotIn"}, {"values", {"g5-1"}}}}}}}));

  // The expander sees the extender's preference (at once in one process; through the pod's annotation else).
  REQUIRE(Eventually([&] { return !cluster.expander_process->ledger->Preferences().empty(); }));

  // 3. CA scales up for the request: both groups fit the pod by count; the expander picks the NVLink one.
  const corev1::Pod from_request = testing::PodFromTemplate(request, pod_template);
  ::grpcplugin::BestOptionsRequest best_options;
  (*best_options.mutable_nodebytesmap())["g5-group"] = TemplateNode("g5-group", "g5.48xlarge", 8).SerializeAsString();
  (*best_options.mutable_nodebytesmap())["p4d-group"] = TemplateNode("p4d-group", "p4d.24xlarge", 8).SerializeAsString();
  for (const std::string group : {"g5-group", "p4d-group"}) {
    ::grpcplugin::Option* option = best_options.add_options();
    option->set_nodegroupid(group);
    option->set_nodecount(1);
    option->add_podbytes(from_request.SerializeAsString());
  }
  const ::grpcplugin::BestOptionsResponse chosen = cluster.BestOptions(best_options);
  REQUIRE(chosen.options_size() == 1);
  CHECK(chosen.options(0).nodegroupid() == "p4d-group");

  REQUIRE(Eventually([&] { return !cluster.process.ledger->Intents().empty(); }));  // the extender sees the intent

  // 4. The new node registers.
  cluster.api.Upsert(Resource::kNodes, GpuNode("p4d-new", "p4d.24xlarge", "p4d-group", 8, Rfc3339(absl::Now())));
  REQUIRE(Eventually([&] { return cluster.extender.state->Snapshot("p4d-new") != nullptr; }));

  // 5. A 1-GPU pod arrives first: the node is held for the pod it was bought for, in filter and in bind.
  cluster.api.Upsert(Resource::kPods, GpuPod("web", 1, false));
  const json web = cluster.Filter("web", {"p4d-new"});
  CHECK(Cluster::Passed(web).empty());
  REQUIRE(web["FailedAndUnresolvableNodes"].contains("p4d-new"));
  CHECK_THAT(web["FailedAndUnresolvableNodes"]["p4d-new"].get<std::string>(),
             Catch::Contains("scaled up for ml/trainer"));
  CHECK_THAT(cluster.Bind("web", "p4d-new"), Catch::Contains("held for the pods a scale-up brought it for"));
  CHECK(cluster.api.Object(Resource::kPods, "ml", "web")["spec"].value("nodeName", "").empty());

  // 6. The trainer is offered both; only the new node passes, and it binds there with 8 GPU ids.
  CHECK(Cluster::Passed(cluster.Filter("trainer", {"g5-1", "p4d-new"})) == std::vector<std::string>{"p4d-new"});
  REQUIRE(cluster.Bind("trainer", "p4d-new") == "");
  const json bound = cluster.api.Object(Resource::kPods, "ml", "trainer");
  CHECK(bound["spec"]["nodeName"] == "p4d-new");
  CHECK(bound["metadata"]["annotations"]["topofit.io/gpu-ids"] == "0,1,2,3,4,5,6,7");

  // 7. The request has served: withdrawn. The hold is over, and the web pod goes where GPUs are free.
  REQUIRE(Eventually([&] {
    return cluster.api.StoredObject(kRequestPath).is_null() && cluster.api.StoredObject(kTemplatePath).is_null();
  }));
  CHECK(Eventually([&] {
    return cluster.process.ledger->Intents().empty() && cluster.expander_process->ledger->Intents().empty();
  }));
  CHECK(Cluster::Passed(cluster.Filter("web", {"g5-1", "p4d-new"})) == std::vector<std::string>{"g5-1"});

  // 8. `topofit explain pod ml/trainer` tells the whole chain, newest first, on one correlation id: the
  // bind, the capacity withdrawn, the fit, the intent and ranking, the capacity asked, the refusal.
  cli::ExplainOptions explain;
  explain.subject = "pod";
  explain.name = "ml/trainer";
  explain.db = cluster.scratch.path("decisions.db");
  const auto [code, story] = cluster.Explain(explain);
  INFO(story);
  REQUIRE(code == 0);
  CHECK_THAT(story, Catch::StartsWith("ml/trainer bound to p4d-new"));
  CHECK_THAT(story, Catch::Contains("correlation id uid-trainer ("));
  const std::vector<std::string> chain = {
      "bound to p4d-new, GPUs 0,1,2,3,4,5,6,7",
      "the ProvisioningRequest has served",
      "filter: 1 of 2 nodes fit 8 GPUs; p4d-new would give GPUs 0,1,2,3,4,5,6,7, weakest link NV",
      "node group p4d-group grows by 1 node(s); 8 of its GPUs held for 1 pod(s)",
      "expander ranked 2 GPU group(s): g5-group refused: its new nodes would not take 1 GPU pod(s); p4d-group chosen",
      "asked cluster-autoscaler for capacity",
      "needs new capacity: 8 GPUs with links of NV or better",
      "filter: every one of 1 nodes refused 8 GPUs: g5-1: needs links of NV or better, best reachable is",
  };
  size_t at = 0;
  for (const std::string& step : chain) {
    INFO("step: " << step);
    const size_t found = story.find(step, at);
    CHECK(found != std::string::npos);
    if (found != std::string::npos) at = found;
  }

  // The same from the running extender's ops port, behind the admin token, as JSON.
  explain.db.clear();
  explain.server = absl::StrCat("http://127.0.0.1:", cluster.ops_port);
  explain.token_file = cluster.scratch.path("admin-token");
  explain.json = true;
  const auto [server_code, server_json] = cluster.Explain(explain);
  REQUIRE(server_code == 0);
  const json told = json::parse(server_json);
  CHECK(told["correlationId"] == "uid-trainer");
  // filter, capacity asked, preference, ranking, intent, filter, capacity withdrawn, bind.
  CHECK(told["decisions"].size() == 8);
  CHECK(told["decisions"][0]["kind"] == "bind");
  CHECK(told["decisions"][0]["text"] == "bound to p4d-new, GPUs 0,1,2,3,4,5,6,7");
  explain.token_file.clear();
  CHECK(cluster.Explain(explain).first == 1);  // no token: 403 from the server

  // 9. What `kubectl describe pod ml/trainer` shows, from Events topofit wrote (events.k8s.io/v1): refused
  // for its topology with the best set g5-1 reaches, capacity asked, capacity held, GPUs assigned.
  std::map<std::string, json> events = cluster.EventsAbout("trainer");
  std::vector<std::string> reasons;
  for (const auto& [reason, event] : events) reasons.push_back(reason);
  CHECK(reasons == std::vector<std::string>{"CapacityHeld", "CapacityRequested", "GpusAssigned", "RefusedForTopology"});
  for (const auto& [reason, event] : events) {
    INFO(event.dump());
    CHECK(event["regarding"] == json({{"apiVersion", "v1"}, {"kind", "Pod"}, {"namespace", "ml"}, {"name", "trainer"},
                                      {"uid", "uid-trainer"}}));
    CHECK(event["reportingController"] == "topofit");
    CHECK(event["type"] == (reason == "RefusedForTopology" ? "Warning" : "Normal"));
    CHECK_FALSE(event.contains("series"));  // each happened once
  }
  CHECK_THAT(events["RefusedForTopology"]["note"].get<std::string>(),
             Catch::StartsWith("every one of 1 nodes refused 8 GPUs: g5-1: needs links of NV or better, best reachable "
                               "is") &&
                 Catch::Contains("(best set: GPUs "));
  CHECK(events["CapacityRequested"]["note"] == "asked cluster-autoscaler for capacity (ProvisioningRequest)");
  CHECK(events["CapacityHeld"]["note"] == "node group p4d-group grows by 1 node(s); 8 of its GPUs held for 1 pod(s)");
  CHECK(events["GpusAssigned"]["note"] == "bound to p4d-new, GPUs 0,1,2,3,4,5,6,7");
  // The 1-GPU latecomer was held back from capacity bought for another pod, not refused for its topology.
  CHECK(cluster.EventsAbout("web").empty());
}

// Issue 38: CA's gRPC client sends no client certificate, so whoever reaches the expander's port can send
// BestOptions. A forged node group whose template gives NVLink must not make the extender refuse a real
// PCIe node to a pod that only prefers NVLink (asking for capacity from a group that does not exist); with
// --trust-expander-templates the operator vouches for every caller, and the same template counts.
TEST_CASE("A forged node group from a caller without a client certificate cannot make the extender refuse a real node",
          "[e2e]") {
  const std::string ledger = GENERATE(as<std::string>(), "memory", "api");
  const bool trusted = GENERATE(false, true);
  INFO("--ledger=" << ledger << (trusted ? " --trust-expander-templates" : ""));
  Cluster cluster(ledger, trusted);
  // No NVLink node left: the free PCIe g5 is the only shape the cluster shows.
  cluster.api.Delete(Resource::kPods, "ml", "resident");
  cluster.api.Delete(Resource::kNodes, "", "p4d-busy");
  cluster.api.Upsert(Resource::kPods,
                     testing::PendingGpuPod("learner", 4, {{"topofit.io/min-link", "NV"}, {"topofit.io/expected-runtime", "10h"}},
                                            Rfc3339(absl::Now())));
  REQUIRE(Eventually([&] { return Cluster::Passed(cluster.Filter("learner", {"g5-1"})) == std::vector<std::string>{"g5-1"}; }));

  // The forger's call: one option of an invented group whose template is an 8-GPU NVLink p4d.
  ::grpcplugin::BestOptionsRequest forged;
  (*forged.mutable_nodemap())["forged-p4d"] = TemplateNode("forged-p4d", "p4d.24xlarge", 8);
  ::grpcplugin::Option* option = forged.add_options();
  option->set_nodegroupid("forged-p4d");
  option->set_nodecount(1);
  cluster.BestOptions(forged);
  if (ledger == "api") {  // the expander publishes the template, the extender reads it back
    REQUIRE(static_cast<kubeclient::ApiLedger&>(*cluster.separate_process.ledger).WaitPublished(kubeclient::testing::kPatience));
    REQUIRE(static_cast<kubeclient::ApiLedger&>(*cluster.process.ledger).node_groups().Refresh().ok());
  }
  const std::map<std::string, ledger::NodeGroupTemplate> known = cluster.process.ledger->NodeGroups();
  REQUIRE(known.count("forged-p4d") == 1);  // kept and shown (get_ledger), with its trust
  CHECK(known.at("forged-p4d").trusted == trusted);

  const json filtered = cluster.Filter("learner", {"g5-1"});
  if (trusted) {
    CHECK(Cluster::Passed(filtered).empty());
    CHECK_THAT(filtered["FailedAndUnresolvableNodes"]["g5-1"].get<std::string>(),
               Catch::Contains("as node group forged-p4d gives"));
  } else {
    CHECK(Cluster::Passed(filtered) == std::vector<std::string>{"g5-1"});
    CHECK(cluster.Bind("learner", "g5-1").empty());
  }
}

}  // namespace
}  // namespace topofit
