// Issue 37's end-to-end check of the DRA watches: the extender built as `topofit extender --live-state --dra v1`
// builds it, against the fake API server serving resource.k8s.io/v1 ResourceSlices and ResourceClaims. The
// GPUs of a claim pod (kube-scheduler's DRA plugin allocated them; the pod asks for no nvidia.com/gpu) are
// never offered to a pod that asks through the device plugin: refused while the claim holds them, whether it
// was listed at start-up or arrived by a watch event later, and offered again once it is deleted.

#include <string>

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

}  // namespace
}  // namespace topofit
