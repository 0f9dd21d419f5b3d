// Issue 37's end-to-end check of the DRA watches: the extender built as `topofit extender --live-state --dra v1`
// builds it, against the fake API server serving resource.k8s.io/v1 ResourceSlices and ResourceClaims. The
// GPUs of a claim pod (kube-scheduler's DRA plugin allocated them; the pod asks for no nvidia.com/gpu) are
// never offered to a pod that asks through the device plugin: refused while the claim holds them, whether it
// was listed at start-up or arrived by a watch event later, and offered again once it is deleted.

#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "cli/extender_command.h"
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

  void StartExtender() {
    cli::ExtenderOptions options = ExtenderOptions();
    options.scheduler_name = "topofit";
    options.dra_version = "v1";
    E2eCluster::StartExtender(options);
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
