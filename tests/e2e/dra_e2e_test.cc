// Issue 37's end-to-end check of the DRA watches: the extender built as `topofit extender --live-state --dra v1`
// builds it, against the fake API server serving resource.k8s.io/v1 ResourceSlices and ResourceClaims. The
// GPUs of a claim pod (kube-scheduler's DRA plugin allocated them; the pod asks for no nvidia.com/gpu) are
// never offered to a pod that asks through the device plugin: refused while the claim holds them, whether it
// was listed at start-up or arrived by a watch event later, and offered again once it is deleted.

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/expander_command.h"
#include "cli/extender_command.h"
#include "cli/ledger_flags.h"
#include "proto/expander.grpc.pb.h"
#include "proto/k8s_core_v1.pb.h"
#include "tests/e2e/e2e_cluster.h"
#include "tests/e2e/e2e_objects.h"
#include "tests/kube/dra_fixtures.h"
#include "tests/kubeclient/eventually.h"
#include "tests/kubeclient/fake_api_server.h"

namespace topofit {
namespace {

using kubeclient::testing::Eventually;
using kubeclient::testing::Resource;
using nlohmann::json;
namespace corev1 = ::k8s::io::api::core::v1;

// The node of the slice fixture: 8 A100-SXM4-80GB, all of them allocatable through the device plugin too,
// as on a cluster moving to DRA.
constexpr char kNode[] = "a100-node-1";

json A100Node() {
  return {{"metadata",
           {{"name", kNode},
            {"labels",
             {{"kubernetes.io/hostname", kNode},
              {"node.kubernetes.io/instance-type", "p4de.24xlarge"},
              {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}}}}},
          {"status", {{"capacity", {{"nvidia.com/gpu", "8"}}}, {"allocatable", {{"nvidia.com/gpu", "8"}}}}}};
}

// The fixture's claim (namespace ml), allocated gpu-`first`..gpu-`last` of kNode rather than gpu-2 and gpu-3.
json ClaimHolding(int first, int last) {
  json claim = testing::DraFixture("resourceclaim-v1-allocated.json");
  claim["spec"]["devices"]["requests"][0]["exactly"]["count"] = last - first + 1;
  claim["spec"]["devices"].erase("constraints");  // more GPUs than one PCIe root has
  json results = json::array();
  for (int gpu = first; gpu <= last; ++gpu) {
    results.push_back(
        {{"request", "gpus"}, {"driver", "gpu.nvidia.com"}, {"pool", kNode}, {"device", absl::StrCat("gpu-", gpu)}});
  }
  claim["status"]["allocation"]["devices"]["results"] = std::move(results);
  return claim;
}

// The fixture's slice of kNode, published for `node` instead (its own pool).
json SliceOf(const std::string& node) {
  json slice = testing::DraFixture("resourceslice-v1.json");
  slice["metadata"]["name"] = node + "-gpu.nvidia.com";
  slice["metadata"].erase("uid");
  slice["spec"]["nodeName"] = node;
  slice["spec"]["pool"]["name"] = node;
  return slice;
}

json NodeNamed(const std::string& node) {
  json object = A100Node();
  object["metadata"]["name"] = node;
  object["metadata"]["labels"]["kubernetes.io/hostname"] = node;
  return object;
}

// A claim (namespace ml) allocated `gpus` of `node` ("gpu-<i>" of the node's pool).
json ClaimAllocated(const std::string& name, const std::string& node, const std::vector<int>& gpus) {
  json claim = testing::DraFixture("resourceclaim-v1-allocated.json");
  claim["metadata"]["name"] = name;
  claim["metadata"]["uid"] = "uid-claim-" + name;
  claim["spec"]["devices"]["requests"][0]["exactly"]["count"] = gpus.size();
  claim["spec"]["devices"].erase("constraints");
  json results = json::array();
  for (int gpu : gpus) {
    results.push_back({{"request", "gpus"}, {"driver", "gpu.nvidia.com"}, {"pool", node}, {"device", absl::StrCat("gpu-", gpu)}});
  }
  claim["status"]["allocation"]["devices"]["results"] = std::move(results);
  claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] = json::array({node});
  return claim;
}

// What the resource claim controller makes of the template of a pod asking 2 GPUs under one PCIe root: the
// fixture's claim before kube-scheduler's DRA plugin allocated it.
json PendingTwoGpusOneRoot(const std::string& name) {
  json claim = testing::DraFixture("resourceclaim-v1-allocated.json");
  claim["metadata"]["name"] = name;
  claim["metadata"]["uid"] = "uid-claim-" + name;
  claim["metadata"].erase("ownerReferences");
  claim["status"] = json::object();
  return claim;
}

// A pending pod of the "topofit" profile whose GPUs come from the claim made for it from a template, named in
// its status as the resource claim controller writes it; it requests no nvidia.com/gpu.
json PendingClaimPod(const std::string& name, const std::string& claim) {
  json pod = testing::PendingGpuPod(name, 0);
  pod["spec"]["containers"][0]["resources"] = {{"claims", {{{"name", "gpus"}}}}};
  pod["spec"]["resourceClaims"] = {{{"name", "gpus"}, {"resourceClaimTemplateName", "two-gpus-one-root"}}};
  pod["status"]["resourceClaimStatuses"] = {{{"name", "gpus"}, {"resourceClaimName", claim}}};
  return pod;
}

std::string NameOf(const json& object) { return object["metadata"]["name"].get<std::string>(); }

// The node and its slice in the fake API server; the extender started once the test has put in what should
// be there at start-up.
struct DraCluster : testing::E2eCluster {
  DraCluster() : E2eCluster("topofit-dra-e2e-test") {
    api.Upsert(Resource::kNodes, A100Node());
    api.Upsert(Resource::kResourceSlices, testing::DraFixture("resourceslice-v1.json"));
  }

  void StartExtender(bool provisioning_requests = false) {
    cli::ExtenderOptions options = ExtenderOptions();
    options.scheduler_name = "topofit";
    options.dra_version = "v1";
    options.provisioning_requests = provisioning_requests;
    E2eCluster::StartExtender(options);
  }

  // `topofit expander --dra v1` on loopback (insecure gRPC), against this cluster's API server.
  cli::ExpanderOptions DraExpanderOptions() {
    cli::ExpanderOptions options;
    options.address = "127.0.0.1";
    options.grpc_port = 0;
    options.insecure = true;
    options.kubeconfig = ExtenderOptions().kubeconfig;
    options.dra_version = "v1";
    return options;
  }

  // cluster-autoscaler's BestOptions call to the expander serving on `port`.
  static ::grpcplugin::BestOptionsResponse BestOptions(int port, const ::grpcplugin::BestOptionsRequest& request) {
    auto channel = ::grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), ::grpc::InsecureChannelCredentials());
    ::grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    ::grpcplugin::BestOptionsResponse response;
    REQUIRE(::grpcplugin::Expander::NewStub(channel)->BestOptions(&context, request, &response).ok());
    return response;
  }

  // kube-scheduler's filter call for the pending pod (NodeNames, the extender's deployed mode): whether the
  // extender passes the node.
  bool Passes(const std::string& pod) {
    const json filtered = Post("/filter", {{"Pod", api.Object(Resource::kPods, "ml", pod)}, {"NodeNames", {kNode}}});
    INFO(filtered.dump());
    REQUIRE(filtered.value("Error", "").empty());
    return filtered["NodeNames"].size() == 1;
  }

  // kube-scheduler's filter call for the pod over `nodes`.
  json Filter(const std::string& pod, const std::vector<std::string>& nodes) {
    return Post("/filter", {{"Pod", api.Object(Resource::kPods, "ml", pod)}, {"NodeNames", nodes}});
  }

  // Binds the pod to the node; the GPUs the extender gave it (its `topofit.io/gpu-ids`).
  std::string Bind(const std::string& pod) {
    const json args = {{"PodName", pod}, {"PodNamespace", "ml"}, {"PodUID", absl::StrCat("uid-", pod)}, {"Node", kNode}};
    const json bound = Post("/bind", args);
    REQUIRE(bound.value("Error", "x").empty());
    const json annotations = api.Object(Resource::kPods, "ml", pod)["metadata"]["annotations"];
    return annotations.value("topofit.io/gpu-ids", "");
  }

  // Binds the pod to the node where its claim names its GPUs: bound, and no `topofit.io/gpu-ids` written.
  void BindWithoutGpuIds(const std::string& pod) {
    const json args = {{"PodName", pod}, {"PodNamespace", "ml"}, {"PodUID", absl::StrCat("uid-", pod)}, {"Node", kNode}};
    const json bound = Post("/bind", args);
    INFO(bound.dump());
    CHECK(bound.value("Error", "x").empty());
    const json stored = api.Object(Resource::kPods, "ml", pod);
    CHECK(stored["spec"].value("nodeName", "") == kNode);
    CHECK_FALSE(stored["metadata"].value("annotations", json::object()).contains("topofit.io/gpu-ids"));
  }
};

TEST_CASE("DRA end to end: a claim's GPUs are never offered to a device-plugin pod, and are once it is deleted",
          "[e2e][dra]") {
  DraCluster c;
  const json claim = ClaimHolding(2, 7);
  c.api.Upsert(Resource::kResourceClaims, claim);
  c.api.Upsert(Resource::kPods, testing::PendingGpuPod("train", 4));
  c.api.Upsert(Resource::kPods, testing::PendingGpuPod("infer", 2));
  c.StartExtender();

  // 8 GPUs, the claim holds 6: 2 are free.
  CHECK_FALSE(c.Passes("train"));
  REQUIRE(c.Passes("infer"));
  CHECK(c.Bind("infer") == "0,1");  // the only two the claim left

  // The claim pod finished: its claim is deleted, and its 6 GPUs come back once the watch says so.
  c.api.Delete(Resource::kResourceClaims, "ml", NameOf(claim));
  CHECK(Eventually([&] { return c.Passes("train"); }));
  const std::string train_ids = c.Bind("train");
  INFO("train got " << train_ids);
  CHECK(train_ids.find('0') == std::string::npos);  // never the GPUs infer holds
  CHECK(train_ids.find('1') == std::string::npos);
}

TEST_CASE("DRA end to end: a claim allocated after start-up arrives by the watch and takes its GPUs",
          "[e2e][dra]") {
  DraCluster c;
  c.api.Upsert(Resource::kPods, testing::PendingGpuPod("train", 4));
  c.api.Upsert(Resource::kPods, testing::PendingGpuPod("infer", 2));
  c.StartExtender();
  CHECK(c.Passes("train"));  // all 8 free

  // kube-scheduler's DRA plugin allocates gpu-2..gpu-7 to a claim pod: the claim is written allocated.
  c.api.Upsert(Resource::kResourceClaims, ClaimHolding(2, 7));
  CHECK(Eventually([&] { return !c.Passes("train"); }));
  REQUIRE(c.Passes("infer"));
  CHECK(c.Bind("infer") == "0,1");
}

TEST_CASE("DRA end to end: a claim asking 2 GPUs under one pcieRoot passes the node that has them, not the one "
          "whose free GPUs are each under a root of their own",
          "[e2e][dra]") {
  DraCluster c;
  const std::string scattered = "a100-node-2";
  c.api.Upsert(Resource::kNodes, NodeNamed(scattered));
  c.api.Upsert(Resource::kResourceSlices, SliceOf(scattered));
  // Another claim pod holds one GPU of each root pair on node 2: 4 GPUs free there, no two under one root.
  c.api.Upsert(Resource::kResourceClaims, ClaimAllocated("others", scattered, {0, 2, 4, 6}));
  c.api.Upsert(Resource::kResourceClaims, PendingTwoGpusOneRoot("trainer-0-gpus-7hq2d"));
  c.api.Upsert(Resource::kPods, PendingClaimPod("trainer-0", "trainer-0-gpus-7hq2d"));
  c.StartExtender();

  const json filtered = c.Filter("trainer-0", {kNode, scattered});
  INFO(filtered.dump());
  REQUIRE(filtered.value("Error", "").empty());
  CHECK(filtered["NodeNames"] == json::array({kNode}));
  REQUIRE(filtered["FailedNodes"].contains(scattered));  // preemption could free a root's pair
  CHECK_THAT(filtered["FailedNodes"][scattered].get<std::string>(),
             Catch::Contains("matchAttribute resource.kubernetes.io/pcieRoot needs 2 GPUs sharing one value; at most 1 free"));

  // Prioritize scores the node that can serve it above the one that cannot.
  const json scores = c.Post("/prioritize", {{"Pod", c.api.Object(Resource::kPods, "ml", "trainer-0")},
                                             {"NodeNames", {kNode, scattered}}});
  INFO(scores.dump());
  std::map<std::string, int> by_node;
  for (const json& score : scores) by_node[score["Host"].get<std::string>()] = score["Score"].get<int>();
  CHECK(by_node.at(kNode) > by_node.at(scattered));

  // The scattered node's other claim is deleted: its GPUs come back, and the pod passes it too.
  c.api.Delete(Resource::kResourceClaims, "ml", "others");
  CHECK(Eventually([&] { return c.Filter("trainer-0", {scattered})["NodeNames"].size() == 1; }));
}

std::string Now() { return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone()); }

// A node of node group `group` (the label CA's templates carry, which the holds read) with `product` GPUs,
// created now.
json GroupNode(const std::string& name, const std::string& instance_type, const std::string& group,
               const std::string& product) {
  json node = NodeNamed(name);
  node["metadata"]["labels"]["node.kubernetes.io/instance-type"] = instance_type;
  node["metadata"]["labels"]["eks.amazonaws.com/nodegroup"] = group;
  node["metadata"]["labels"]["nvidia.com/gpu.product"] = product;
  node["metadata"]["creationTimestamp"] = Now();
  return node;
}

// The scale-up loop for a claim pod, as for a device-plugin pod (tests/e2e/scale_up_e2e_test.cc): refused on a
// PCIe node for the NVLink it requires, it asks cluster-autoscaler for a node through a ProvisioningRequest
// whose template names the very claim the pod uses (made from its template, named in its status), so that
// CA's DRA simulation allocates that claim on the node it imagines; the API server accepts the template only
// because each claim its containers name is one of its own (the fake validates as the real one does). The
// expander, reading the claim the request's pod names, grows the NVLink group; the new node is held for the
// pod from a latecomer, and the pod passes it.
TEST_CASE("DRA end to end: a claim pod refused for topology asks CA for a node naming its own claim, gets the "
          "NVLink group, and the node is held for it",
          "[e2e][dra][provisioning]") {
  DraCluster c;
  c.api.Upsert(Resource::kResourceClaims, ClaimAllocated("others", kNode, {0, 1, 2, 3, 4, 5, 6, 7}));  // full
  c.api.Upsert(Resource::kNodes, GroupNode("g5-1", "g5.48xlarge", "g5-group", "NVIDIA-A10G"));
  c.api.Upsert(Resource::kResourceSlices, SliceOf("g5-1"));
  c.api.Upsert(Resource::kResourceClaims, PendingTwoGpusOneRoot("trainer-0-gpus-7hq2d"));
  json trainer = PendingClaimPod("trainer-0", "trainer-0-gpus-7hq2d");
  trainer["metadata"]["annotations"]["topofit.io/min-link"] = "NV";
  trainer["metadata"]["annotations"]["topofit.io/topology-policy"] = "required";
  c.api.Upsert(Resource::kPods, trainer);
  REQUIRE(cli::UseLedger("memory", c.ExtenderOptions().kubeconfig, c.process, c.log).ok());
  c.StartExtender(/*provisioning_requests=*/true);

  // 1. kube-scheduler offers the g5 (the A100 node's GPUs are all allocated): refused for NVLink.
  const json refused = c.Filter("trainer-0", {"g5-1"});
  INFO(refused.dump());
  CHECK(refused["NodeNames"].empty());
  CHECK(refused["FailedAndUnresolvableNodes"].contains("g5-1"));

  // 2. Its ProvisioningRequest, consumed by the pod; the template names the pod's claim.
  REQUIRE(Eventually([&] {
    return c.api.Object(Resource::kPods, "ml", "trainer-0")["metadata"].value("annotations", json::object()).contains(
        "autoscaling.x-k8s.io/consume-provisioning-request");
  }));
  const json pod_template = c.api.StoredObject("/api/v1/namespaces/ml/podtemplates/topofit-trainer-0");
  const json request =
      c.api.StoredObject("/apis/autoscaling.x-k8s.io/v1/namespaces/ml/provisioningrequests/topofit-trainer-0");
  REQUIRE(pod_template.is_object());
  REQUIRE(request.is_object());
  const json& spec = pod_template["template"]["spec"];
  CHECK(spec["resourceClaims"] == json::parse(R"([{"name": "gpus", "resourceClaimName": "trainer-0-gpus-7hq2d"}])"));
  CHECK(spec["containers"][0]["resources"]["claims"] == json::parse(R"([{"name": "gpus"}])"));
  CHECK(spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
            ["matchExpressions"]
            .back() == json::parse(R"({"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["g5-1"]})"));

  // 3. CA scales up for the request's pod: the expander (one process with the extender, `topofit serve`)
  // reads the claim it names and grows the NVLink group, not the cheaper-looking PCIe one.
  absl::StatusOr<cli::ExpanderParts> parts = cli::BuildExpander(c.DraExpanderOptions(), c.process, c.log);
  REQUIRE(parts.ok());
  REQUIRE(parts->claim_watch->WaitForSync(kubeclient::testing::kPatience));
  std::unique_ptr<expander::GrpcServer> grpc = expander::GrpcServer::Start(parts->grpc, *parts->service).value();
  ::grpcplugin::BestOptionsRequest best_options;
  (*best_options.mutable_nodebytesmap())["g5-group"] = testing::TemplateNode("g5-group", "g5.48xlarge", 8).SerializeAsString();
  (*best_options.mutable_nodebytesmap())["p4d-group"] =
      testing::TemplateNode("p4d-group", "p4de.24xlarge", 8).SerializeAsString();
  const std::string from_request = testing::PodFromTemplate(request, pod_template).SerializeAsString();
  for (const std::string group : {"g5-group", "p4d-group"}) {
    ::grpcplugin::Option* option = best_options.add_options();
    option->set_nodegroupid(group);
    option->set_nodecount(1);
    option->add_podbytes(from_request);
  }
  const ::grpcplugin::BestOptionsResponse chosen = DraCluster::BestOptions(grpc->port(), best_options);
  grpc->Shutdown(absl::ZeroDuration());
  REQUIRE(chosen.options_size() == 1);
  CHECK(chosen.options(0).nodegroupid() == "p4d-group");
  REQUIRE(Eventually([&] { return !c.process.ledger->Intents().empty(); }));  // the extender sees the intent

  // 4. The new node registers with its slice; a latecomer asking all 8 of its GPUs is refused there.
  c.api.Upsert(Resource::kNodes, GroupNode("p4d-new", "p4de.24xlarge", "p4d-group", "NVIDIA-A100-SXM4-80GB"));
  c.api.Upsert(Resource::kResourceSlices, SliceOf("p4d-new"));
  REQUIRE(Eventually([&] { return c.extender.state->Snapshot("p4d-new") != nullptr; }));
  c.api.Upsert(Resource::kPods, testing::PendingGpuPod("web", 8, {}, Now()));  // not late: holds apply
  const json web = c.Filter("web", {"p4d-new"});
  INFO(web.dump());
  CHECK(web["NodeNames"].empty());
  REQUIRE(web["FailedAndUnresolvableNodes"].contains("p4d-new"));
  CHECK_THAT(web["FailedAndUnresolvableNodes"]["p4d-new"].get<std::string>(), Catch::Contains("scaled up for ml/trainer-0"));

  // 5. The claim pod, offered both, passes only the node grown for it.
  CHECK(c.Filter("trainer-0", {"g5-1", "p4d-new"})["NodeNames"] == json::array({"p4d-new"}));
}

// Where only NVIDIA's DRA driver hands out GPUs, a node advertises no nvidia.com/gpu: its slice says which
// GPUs it has, its labels what they are. kube-scheduler sends the claim pod to topofit (the dra component's
// configuration has no managedResources), topofit passes the node and binds the pod; the DRA plugin's
// allocation then holds the GPUs it chose.
TEST_CASE("DRA end to end: on a node only the DRA driver serves, a claim pod passes, is bound without GPU ids, and "
          "its allocated claim holds its GPUs",
          "[e2e][dra]") {
  DraCluster c;
  json node = A100Node();
  node["status"] = json::object();
  c.api.Upsert(Resource::kNodes, node);
  c.api.Upsert(Resource::kResourceClaims, PendingTwoGpusOneRoot("trainer-0-gpus-7hq2d"));
  c.api.Upsert(Resource::kPods, PendingClaimPod("trainer-0", "trainer-0-gpus-7hq2d"));
  c.StartExtender();
  REQUIRE(c.Passes("trainer-0"));

  c.BindWithoutGpuIds("trainer-0");
  CHECK(c.extender.state->Snapshot(kNode)->free().size() == 8);  // nothing taken by topofit's bind

  // kube-scheduler's DRA plugin allocated gpu-2 and gpu-3 to the claim: the watch brings it, they are taken.
  json allocated = testing::DraFixture("resourceclaim-v1-allocated.json");
  allocated["metadata"]["name"] = "trainer-0-gpus-7hq2d";
  allocated["metadata"]["uid"] = "uid-claim-trainer-0-gpus-7hq2d";
  c.api.Upsert(Resource::kResourceClaims, allocated);
  CHECK(Eventually([&] { return c.extender.state->Snapshot(kNode)->free().size() == 6; }));
}

TEST_CASE("DRA end to end: a pod asking nvidia.com/gpu where DRA serves it is bound without GPU ids, and its GPUs "
          "are counted once, by the claim kube-scheduler made",
          "[e2e][dra]") {
  DraCluster c;
  json node = A100Node();
  node["status"] = json::object();  // no device plugin: a DeviceClass maps nvidia.com/gpu to the DRA driver
  c.api.Upsert(Resource::kNodes, node);
  c.api.Upsert(Resource::kPods, testing::PendingGpuPod("server-1", 2));
  c.StartExtender();
  REQUIRE(c.Passes("server-1"));

  // kube-scheduler's DRA plugin, before the bind (KEP-5004): the claim allocated gpu-4 and gpu-5, named in the
  // pod's status.
  c.api.Upsert(Resource::kResourceClaims, testing::DraFixture("resourceclaim-v1-extended-resource.json"));
  json pod = c.api.Object(Resource::kPods, "ml", "server-1");
  pod["status"]["extendedResourceClaimStatus"] = {
      {"resourceClaimName", "server-1-extended-resources-x7k2p"},
      {"requestMappings",
       {{{"containerName", "main"}, {"resourceName", "nvidia.com/gpu"}, {"requestName", "container-0-request-0"}}}}};
  c.api.Upsert(Resource::kPods, pod);

  c.BindWithoutGpuIds("server-1");
  // Once the watches bring the bound pod and its claim: the claim's two GPUs, and no more.
  const topology::GpuSet claimed_free = topology::GpuSet::Parse("0,1,2,3,6,7", 8).value();
  CHECK(Eventually([&] { return c.extender.state->Snapshot(kNode)->free() == claimed_free; }));
}

// cluster-autoscaler sends the claim pod as it is: no nvidia.com/gpu, its claim named in its status.
// `topofit expander --dra v1` reads the claim from its own watch and ranks the pod by its 4 GPUs and its
// required NVLink: the NVLink group, not the cheaper PCIe one it would pick for a pod asking no GPU.
TEST_CASE("DRA end to end: topofit expander --dra ranks a claim pod by the GPUs its claim asks", "[e2e][dra]") {
  DraCluster c;
  json claim = PendingTwoGpusOneRoot("trainer-0-gpus-7hq2d");
  claim["spec"]["devices"]["requests"][0]["exactly"]["count"] = 4;
  claim["spec"]["devices"].erase("constraints");
  c.api.Upsert(Resource::kResourceClaims, claim);

  const cli::ExpanderOptions options = c.DraExpanderOptions();
  cli::ProcessState process;
  REQUIRE(cli::UseLedger("memory", options.kubeconfig, process, c.log).ok());
  absl::StatusOr<cli::ExpanderParts> parts = cli::BuildExpander(options, process, c.log);
  REQUIRE(parts.ok());
  REQUIRE(parts->claim_watch != nullptr);
  REQUIRE(parts->claim_watch->WaitForSync(kubeclient::testing::kPatience));
  std::unique_ptr<expander::GrpcServer> grpc = expander::GrpcServer::Start(parts->grpc, *parts->service).value();

  corev1::Pod pod;
  pod.mutable_metadata()->set_name("trainer-0");
  pod.mutable_metadata()->set_namespace_("ml");
  pod.mutable_metadata()->set_uid("uid-trainer-0");
  (*pod.mutable_metadata()->mutable_annotations())["topofit.io/min-link"] = "NV";
  (*pod.mutable_metadata()->mutable_annotations())["topofit.io/topology-policy"] = "required";
  pod.mutable_spec()->add_containers()->set_name("trainer");
  corev1::PodResourceClaim* entry = pod.mutable_spec()->add_resourceclaims();
  entry->set_name("gpus");
  entry->set_resourceclaimtemplatename("four-gpus");
  corev1::PodResourceClaimStatus* made = pod.mutable_status()->add_resourceclaimstatuses();
  made->set_name("gpus");
  made->set_resourceclaimname("trainer-0-gpus-7hq2d");

  ::grpcplugin::BestOptionsRequest request;
  (*request.mutable_nodebytesmap())["g5-group"] = testing::TemplateNode("g5-group", "g5.48xlarge", 0).SerializeAsString();
  (*request.mutable_nodebytesmap())["p4d-group"] = testing::TemplateNode("p4d-group", "p4d.24xlarge", 0).SerializeAsString();
  for (const std::string group : {"g5-group", "p4d-group"}) {
    ::grpcplugin::Option* option = request.add_options();
    option->set_nodegroupid(group);
    option->set_nodecount(1);
    option->add_podbytes(pod.SerializeAsString());
  }
  const ::grpcplugin::BestOptionsResponse response = DraCluster::BestOptions(grpc->port(), request);
  REQUIRE(response.options_size() == 1);
  CHECK(response.options(0).nodegroupid() == "p4d-group");
  grpc->Shutdown(absl::ZeroDuration());
}

TEST_CASE("DRA end to end: a claim whose CEL selector topofit cannot judge is refused by the filter's error, "
          "never passed",
          "[e2e][dra]") {
  DraCluster c;
  json claim = PendingTwoGpusOneRoot("trainer-0-gpus-7hq2d");
  claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = {
      {{"cel", {{"expression", "device.attributes[\"gpu.nvidia.com\"].productName.matches(\"A100.*\")"}}}}};
  c.api.Upsert(Resource::kResourceClaims, claim);
  c.api.Upsert(Resource::kPods, PendingClaimPod("trainer-0", "trainer-0-gpus-7hq2d"));
  c.StartExtender();
  const json filtered = c.Filter("trainer-0", {kNode});
  INFO(filtered.dump());
  CHECK_THAT(filtered.value("Error", ""), Catch::Contains("outside what topofit judges"));
  CHECK(filtered.value("NodeNames", json::array()).empty());
}

}  // namespace
}  // namespace topofit
