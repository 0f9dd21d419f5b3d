// Issue 33's end-to-end gang scenario through the real extender (HTTP verbs, the Kubernetes client, live
// state from watches) against the fake API server, with a stand-in for kube-scheduler's loop: one pod a
// cycle, filter over every node, bind to the first node passed, a pod whose bind fails goes back to the
// queue. A 16-pod x 4-GPU gang that requires one NVLink clique races 1-GPU pods queued between its
// members; the gang lands in one clique, whole, and no GPU is given twice. A gang whose only rack is partly
// busy and partly built waits, and asks cluster-autoscaler once for what the rack lacks (the request owned by
// a member, so the garbage collector deletes it with the gang); once the nodes come the gang lands there and
// the request is withdrawn. NVIDIA's ComputeDomains: their pods land as one gang in one clique, a tray
// each, away from trays another domain holds, and the expander ranks them as that gang.

#include <array>
#include <chrono>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cli/expander_command.h"
#include "cli/extender_command.h"
#include "cli/ledger_flags.h"
#include "kubeclient/provisioning.h"
#include "proto/expander.grpc.pb.h"
#include "proto/k8s_core_v1.pb.h"
#include "tests/e2e/e2e_cluster.h"
#include "tests/e2e/e2e_objects.h"
#include "tests/kube/builders.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"

namespace topofit {
namespace {

using kubeclient::testing::Resource;
using nlohmann::json;

constexpr char kPoolLabel[] = "cloud.google.com/gke-nodepool";

// A GB200 compute tray of NVLink clique `clique`, in node pool `pool`.
json Tray(const std::string& name, const std::string& clique, const std::string& pool) {
  return {{"metadata",
           {{"name", name},
            {"labels",
             {{"kubernetes.io/hostname", name},
              {kPoolLabel, pool},
              {"nvidia.com/gpu.product", "NVIDIA-GB200"},
              {"nvidia.com/gpu.clique", clique}}}}},
          {"status", {{"capacity", {{"nvidia.com/gpu", "4"}}}, {"allocatable", {{"nvidia.com/gpu", "4"}}}}}};
}

// A ComputeDomain of NVIDIA's DRA driver in namespace ml, of `nodes` nodes (0: unset), and its channel's claim
// template `<name>-channel`.
json ComputeDomain(const std::string& name, int nodes) {
  return {{"apiVersion", "resource.nvidia.com/v1beta1"},
          {"kind", "ComputeDomain"},
          {"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", absl::StrCat("uid-", name)}}},
          {"spec", {{"numNodes", nodes}, {"channel", {{"resourceClaimTemplate", {{"name", name + "-channel"}}}}}}},
          {"status", {{"status", "NotReady"}}}};
}

// A pending pod of `gpus` device-plugin GPUs joining ComputeDomain `domain` through its channel.
json DomainPod(const std::string& name, int gpus, const std::string& domain) {
  json pod = testing::PendingGpuPod(name, gpus);
  pod["spec"]["resourceClaims"] = json::array({{{"name", "channel"}, {"resourceClaimTemplateName", domain + "-channel"}}});
  pod["spec"]["containers"][0]["resources"]["claims"] = json::array({{{"name", "channel"}}});
  return pod;
}

// Trays by name, with their clique and pool.
struct TrayList {
  std::vector<std::array<std::string, 3>> trays;
  TrayList& Add(int count, const std::string& prefix, const std::string& clique, const std::string& pool) {
    for (int i = 0; i < count; ++i) trays.push_back({absl::StrCat(prefix, i), clique, pool});
    return *this;
  }
};

struct GangCluster : testing::E2eCluster {
  // `compute_domains`: the extender reads ComputeDomains (--compute-domains v1beta1).
  explicit GangCluster(const TrayList& trays, bool provisioning_requests = false, bool compute_domains = false)
      : E2eCluster("topofit-gang-e2e-test") {
    for (const auto& [name, clique, pool] : trays.trays) {
      api.Upsert(Resource::kNodes, Tray(name, clique, pool));
      nodes.push_back(name);
    }
    cli::ExtenderOptions options = ExtenderOptions();
    options.scheduler_name = "topofit";
    options.provisioning_requests = provisioning_requests;
    if (compute_domains) options.compute_domains_version = "v1beta1";
    REQUIRE(cli::UseLedger(options.ledger, options.kubeconfig, process, log).ok());
    StartExtender(options);
  }

  // One kube-scheduler cycle for the pod (NodeNames, the extender's deployed mode): the first node the
  // extender passes, bound; the bind's error otherwise ("unschedulable" when no node passed).
  std::string Cycle(const std::string& pod) {
    const json passed = Post("/filter", {{"Pod", api.Object(Resource::kPods, "ml", pod)}, {"NodeNames", nodes}});
    if (!passed["Error"].get<std::string>().empty()) return passed["Error"];
    if (passed["NodeNames"].empty()) return "unschedulable";
    const std::string node = passed["NodeNames"][0];
    const json bound =
        Post("/bind", {{"PodName", pod}, {"PodNamespace", "ml"}, {"PodUID", absl::StrCat("uid-", pod)}, {"Node", node}});
    return bound.value("Error", "");
  }

  std::vector<std::string> nodes;
};

TEST_CASE("A 16-pod gang lands whole in one NVLink clique while 1-GPU pods race it", "[e2e][gang]") {
  // clique a: 6 trays (24 GPUs), too few for the gang; clique b: 18 trays (72 GPUs)
  GangCluster c(TrayList().Add(6, "a-", "uuid.a", "rack-a").Add(18, "b-", "uuid.b", "rack-b"));
  std::deque<std::string> queue;
  std::vector<std::string> pods;
  for (int i = 0; i < 16; ++i) {
    const std::string member = absl::StrCat("train-", i);
    c.api.Upsert(Resource::kPods, testing::PendingGpuPod(member, 4, {{"topofit.io/gang", "train"}, {"topofit.io/gang-size", "16"},
                                                  {"topofit.io/gang-required-topology", "domain"}}));
    queue.push_back(member);
    pods.push_back(member);
    // a 1-GPU pod after every other member
    if (i % 2 == 0) {
      const std::string single = absl::StrCat("single-", i);
      c.api.Upsert(Resource::kPods, testing::PendingGpuPod(single, 1));
      queue.push_back(single);
      pods.push_back(single);
    }
  }

  std::map<std::string, std::string> errors;  // the last error of each pod still queued
  std::set<std::string> bound;
  // kube-scheduler's queue: a pod whose cycle failed goes to the back and is tried again
  for (int cycle = 0; cycle < 400 && !queue.empty(); ++cycle) {
    const std::string pod = queue.front();
    queue.pop_front();
    const std::string error = c.Cycle(pod);
    if (error.empty()) {
      bound.insert(pod);
      errors.erase(pod);
    } else {
      errors[pod] = error;
      queue.push_back(pod);
    }
  }
  INFO("still queued: " << errors.size() << (errors.empty() ? "" : ", e.g. " + errors.begin()->first + ": " +
                                                                        errors.begin()->second));
  REQUIRE(queue.empty());

  // every member on a tray of clique b, one per tray, each with 4 GPUs; no GPU on any tray given twice
  std::map<std::string, std::set<std::string>> ids_on_node;
  std::set<std::string> gang_nodes;
  for (const std::string& name : pods) {
    const json pod = c.api.Object(Resource::kPods, "ml", name);
    const std::string node = pod["spec"].value("nodeName", "");
    REQUIRE_FALSE(node.empty());
    const std::string ids = pod["metadata"]["annotations"].value("topofit.io/gpu-ids", "");
    INFO(name << " on " << node << " GPUs " << ids);
    for (const absl::string_view id : absl::StrSplit(ids, ',')) {
      CHECK(ids_on_node[node].insert(std::string(id)).second);
    }
    if (name.rfind("train-", 0) == 0) {
      CHECK(node.rfind("b-", 0) == 0);
      CHECK(ids == "0,1,2,3");
      CHECK(gang_nodes.insert(node).second);
    }
  }
  CHECK(gang_nodes.size() == 16);
  CHECK(bound.size() == pods.size());
}

TEST_CASE("A gang whose only rack is partly busy waits, asks once for what the rack lacks, lands, and withdraws it",
          "[e2e][gang]") {
  // rack b: 12 of its 18 trays built, 4 of those busy; 8 trays free now, 6 more can come
  GangCluster c(TrayList().Add(12, "b-", "uuid.b", "rack-b"), /*provisioning_requests=*/true);
  for (int i = 0; i < 4; ++i) {
    json busy = testing::PendingGpuPod(absl::StrCat("busy-", i), 4);
    busy["spec"]["nodeName"] = absl::StrCat("b-", i);
    busy["status"]["phase"] = "Running";
    c.api.Upsert(Resource::kPods, busy);
  }
  // the rack's pool as cluster-autoscaler offers it to the expander (here: straight into the ledger)
  c.process.ledger->RecordNodeGroups(
      {{"rack-b", kube::testing::MakeNode().name("template-node-for-rack-b").label(kPoolLabel, "rack-b")
                      .label("nvidia.com/gpu.product", "NVIDIA-GB200").label("nvidia.com/gpu.clique", "uuid.b")
                      .annotation("topofit.io/nodes-per-domain", "18").gpus(4)}},
      /*trusted=*/true);
  std::vector<std::string> members;
  for (int i = 0; i < 14; ++i) {
    members.push_back(absl::StrCat("train-", i));
    c.api.Upsert(Resource::kPods, testing::PendingGpuPod(members.back(), 4,
                                                         {{"topofit.io/gang", "train"}, {"topofit.io/gang-size", "14"},
                                                          {"topofit.io/gang-required-topology", "domain"}}));
  }
  // the extender has seen the busy trays busy: a 4-GPU pod outside any gang passes none of them
  REQUIRE(kubeclient::testing::Eventually([&] {
    const json probe = c.Post("/filter", {{"Pod", testing::PendingGpuPod("probe", 4)},
                                          {"NodeNames", {"b-0", "b-1", "b-2", "b-3"}}});
    return probe["NodeNames"].is_array() && probe["NodeNames"].empty();
  }));

  // two rounds of every member: each refused everywhere, none bound, one request for the gang
  for (int round = 0; round < 2; ++round) {
    for (const std::string& member : members) CHECK(c.Cycle(member) == "unschedulable");
  }
  const std::string collection = "/apis/autoscaling.x-k8s.io/v1/namespaces/ml/provisioningrequests";
  const std::string name = kubeclient::GangProvisioningObjectName("topofit:ml/train");
  REQUIRE(kubeclient::testing::Eventually([&] {
    for (const std::string& member : members) {
      if (c.api.Object(Resource::kPods, "ml", member)["metadata"]["annotations"].value(
              "autoscaling.x-k8s.io/consume-provisioning-request", "") != name) {
        return false;
      }
    }
    return true;
  }));
  const std::vector<json> requests = c.api.StoredObjects(collection);
  REQUIRE(requests.size() == 1);
  CHECK(requests[0]["metadata"]["name"] == name);
  CHECK(requests[0]["spec"]["provisioningClassName"] == "best-effort-atomic-scale-up.autoscaling.x-k8s.io");
  // 8 members fit the free trays; the 6 the rack lacks are asked for, in the rack's pool and clique
  CHECK(requests[0]["spec"]["podSets"] == json::array({{{"count", 6}, {"podTemplateRef", {{"name", name}}}}}));
  const json pod_template = c.api.StoredObject("/api/v1/namespaces/ml/podtemplates/" + name);
  CHECK(pod_template["template"]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] ==
        json::parse(R"({"nodeSelectorTerms": [{"matchExpressions": [
          {"key": "cloud.google.com/gke-nodepool", "operator": "In", "values": ["rack-b"]},
          {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-GB200"]},
          {"key": "nvidia.com/gpu.clique", "operator": "In", "values": ["uuid.b"]}]}]})"));

  // owned by the member that asked: the API server's garbage collector deletes it with the gang
  CHECK(requests[0]["metadata"]["ownerReferences"] ==
        json::parse(R"([{"apiVersion": "v1", "kind": "Pod", "name": "train-0", "uid": "uid-train-0"}])"));

  // cluster-autoscaler grows the 6 trays; the gang lands whole on rack b's 14 free trays, and its request
  // is withdrawn
  for (int i = 12; i < 18; ++i) {
    const std::string tray = absl::StrCat("b-", i);
    c.api.Upsert(Resource::kNodes, Tray(tray, "uuid.b", "rack-b"));
    c.nodes.push_back(tray);
  }
  // the extender's node watch has delivered every new tray (else a member cycled before that finds too few)
  REQUIRE(kubeclient::testing::Eventually([&] {
    const json probe = c.Post("/filter", {{"Pod", testing::PendingGpuPod("probe", 4)},
                                          {"NodeNames", {"b-12", "b-13", "b-14", "b-15", "b-16", "b-17"}}});
    return probe["NodeNames"].is_array() && probe["NodeNames"].size() == 6;
  }));
  std::deque<std::string> queue(members.begin(), members.end());
  std::set<std::string> gang_nodes;
  for (int cycle = 0; cycle < 200 && !queue.empty(); ++cycle) {
    const std::string member = queue.front();
    queue.pop_front();
    if (!c.Cycle(member).empty()) queue.push_back(member);
  }
  REQUIRE(queue.empty());
  for (const std::string& member : members) {
    const std::string node = c.api.Object(Resource::kPods, "ml", member)["spec"].value("nodeName", "");
    CHECK(gang_nodes.insert(node).second);
    CHECK(std::stoi(node.substr(2)) >= 4);  // not a busy tray
  }
  CHECK(gang_nodes.size() == 14);
  REQUIRE(kubeclient::testing::Eventually([&] {
    return c.api.StoredObjects(collection).empty() &&
           c.api.StoredObject("/api/v1/namespaces/ml/podtemplates/" + name).is_null();
  }));
}

TEST_CASE("A ComputeDomain's pods land in one clique, a tray each, away from a tray another domain holds",
          "[e2e][gang][compute_domain]") {
  // clique a: 2 trays; clique b: 4 trays, of which b-1 holds another domain's channel
  GangCluster c(TrayList().Add(2, "a-", "uuid.a", "rack-a").Add(4, "b-", "uuid.b", "rack-b"),
                /*provisioning_requests=*/false, /*compute_domains=*/true);
  json held = Tray("b-1", "uuid.b", "rack-b");
  held["metadata"]["labels"]["resource.nvidia.com/computeDomain"] = "uid-elsewhere";
  c.api.Upsert(Resource::kNodes, held);
  c.api.Upsert(Resource::kComputeDomains, ComputeDomain("train", 3));
  std::vector<std::string> members;
  for (int i = 0; i < 3; ++i) {
    members.push_back(absl::StrCat("train-", i));
    c.api.Upsert(Resource::kPods, DomainPod(members.back(), 2, "train"));
  }
  // the watches have the domain and the label: the first member's filter reserves the whole domain
  REQUIRE(kubeclient::testing::Eventually([&] {
    const json probe = c.Post("/filter", {{"Pod", c.api.Object(Resource::kPods, "ml", "train-0")}, {"NodeNames", c.nodes}});
    return probe["NodeNames"].is_array() && probe["NodeNames"].size() == 1 &&
           probe["FailedAndUnresolvableNodes"].value("b-1", "").find("another ComputeDomain") != std::string::npos;
  }));
  std::set<std::string> trays;
  for (int round = 0; round < 3 && trays.size() < members.size(); ++round) {
    for (const std::string& member : members) {
      if (c.api.Object(Resource::kPods, "ml", member)["spec"].contains("nodeName")) continue;
      c.Cycle(member);
    }
    trays.clear();
    for (const std::string& member : members) {
      trays.insert(c.api.Object(Resource::kPods, "ml", member)["spec"].value("nodeName", ""));
    }
  }
  // two GPUs each, a tray each, all in clique b and none on b-1
  CHECK(trays == std::set<std::string>{"b-0", "b-2", "b-3"});

  // a pod of another domain is refused the trays train's pods were just bound to, before the driver
  // labels them
  c.api.Upsert(Resource::kComputeDomains, ComputeDomain("serve", 0));
  c.api.Upsert(Resource::kPods, DomainPod("serve-0", 2, "serve"));
  REQUIRE(kubeclient::testing::Eventually([&] {
    return c.Post("/filter", {{"Pod", c.api.Object(Resource::kPods, "ml", "serve-0")}, {"NodeNames", c.nodes}})["NodeNames"] ==
           json::array({"a-0", "a-1"});
  }));
}

// cluster-autoscaler sends a ComputeDomain's pending pods as they are: 2 GPUs each and the domain's channel.
// `topofit expander --compute-domains v1beta1` reads the domain from its own watch and ranks the three pods
// as one gang needing one NVLink domain, a node each: the GB200 rack's group, not one cheaper H100 node that
// holds their GPUs but gives one channel.
TEST_CASE("ComputeDomains end to end: topofit expander --compute-domains ranks a domain's pods as one gang",
          "[e2e][gang][compute_domain]") {
  GangCluster c(TrayList().Add(1, "a-", "uuid.a", "rack-a"));
  c.api.Upsert(Resource::kComputeDomains, ComputeDomain("train", 3));

  ::grpcplugin::BestOptionsRequest request;
  ::k8s::io::api::core::v1::Node rack = testing::TemplateNode("gb200-rack", "unlisted", 4);
  auto& labels = *rack.mutable_metadata()->mutable_labels();
  labels.erase("node.kubernetes.io/instance-type");
  labels["nvidia.com/gpu.product"] = "NVIDIA-GB200";
  labels["nvidia.com/gpu.clique"] = "template";
  (*rack.mutable_metadata()->mutable_annotations())["topofit.io/nodes-per-domain"] = "18";
  (*request.mutable_nodebytesmap())["gb200-rack"] = rack.SerializeAsString();
  (*request.mutable_nodebytesmap())["h100"] = testing::TemplateNode("h100", "p5.48xlarge", 8).SerializeAsString();
  std::vector<std::string> pods;
  for (int i = 0; i < 3; ++i) {
    ::k8s::io::api::core::v1::Pod pod;
    pod.mutable_metadata()->set_name(absl::StrCat("train-", i));
    pod.mutable_metadata()->set_namespace_("ml");
    pod.mutable_metadata()->set_uid(absl::StrCat("uid-train-", i));
    ::k8s::io::api::core::v1::Container* container = pod.mutable_spec()->add_containers();
    container->set_name("worker");
    (*container->mutable_resources()->mutable_limits())["nvidia.com/gpu"].set_string("2");
    ::k8s::io::api::core::v1::PodResourceClaim* channel = pod.mutable_spec()->add_resourceclaims();
    channel->set_name("channel");
    channel->set_resourceclaimtemplatename("train-channel");
    pods.push_back(pod.SerializeAsString());
  }
  for (const auto& [group, nodes] : {std::pair<std::string, int>{"h100", 1}, {"gb200-rack", 3}}) {
    ::grpcplugin::Option* option = request.add_options();
    option->set_nodegroupid(group);
    option->set_nodecount(nodes);
    for (const std::string& pod : pods) option->add_podbytes(pod);
  }

  // The expander's choice, with or without the domains read.
  const auto chosen = [&](bool compute_domains) {
    cli::ExpanderOptions options;
    options.address = "127.0.0.1";
    options.grpc_port = 0;
    options.insecure = true;
    options.kubeconfig = c.ExtenderOptions().kubeconfig;
    options.prices_file = c.scratch.path("prices.json");
    if (compute_domains) options.compute_domains_version = "v1beta1";
    cli::ProcessState process;
    REQUIRE(cli::UseLedger("memory", options.kubeconfig, process, c.log).ok());
    absl::StatusOr<cli::ExpanderParts> parts = cli::BuildExpander(options, process, c.log);
    REQUIRE(parts.ok());
    if (compute_domains) REQUIRE(parts->compute_domain_watch->WaitForSync(kubeclient::testing::kPatience));
    std::unique_ptr<expander::GrpcServer> grpc = expander::GrpcServer::Start(parts->grpc, *parts->service).value();
    auto channel = ::grpc::CreateChannel(absl::StrCat("127.0.0.1:", grpc->port()), ::grpc::InsecureChannelCredentials());
    ::grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    ::grpcplugin::BestOptionsResponse response;
    REQUIRE(::grpcplugin::Expander::NewStub(channel)->BestOptions(&context, request, &response).ok());
    grpc->Shutdown(absl::ZeroDuration());
    REQUIRE(response.options_size() == 1);
    return response.options(0).nodegroupid();
  };
  c.scratch.Write("prices.json", R"({"h100": 30, "gb200-rack": 40})");
  CHECK(chosen(false) == "h100");
  CHECK(chosen(true) == "gb200-rack");
}

}  // namespace
}  // namespace topofit
