#include "scheduler/bind_authorization.h"

#include <catch2/catch.hpp>

#include "tests/kube/builders.h"

namespace topofit::scheduler {
namespace {

using kube::testing::MakePod;

TEST_CASE("AuthorizeBind refuses each bind the stored pod does not ask for, with its reason", "[bind_authorization]") {
  const codec::ExtenderBindingArgs args{"trainer", "ml", "uid-trainer", "p4d-1"};
  const kube::Pod gpu_pod = [] {
    kube::Pod pod = MakePod().name("trainer").gpus(4);
    pod.metadata.namespace_name = "ml";
    return pod;
  }();
  struct Row {
    const char* name;
    std::function<void(kube::Pod&)> change;  // on a copy of gpu_pod
    bool pod_exists;
    bool node_known;
    std::optional<BindRefusal> refusal;
    const char* reason;
  };
  const Row rows[] = {
      {"a GPU pod of topofit's profile on a known node", [](kube::Pod&) {}, true, true, std::nullopt, ""},
      {"unknown node (checked first: nothing else is read)", [](kube::Pod&) {}, true, false, BindRefusal::kUnknownNode,
       "bind refused (unknown-node): unknown node p4d-1"},
      {"no such pod", [](kube::Pod&) {}, false, true, BindRefusal::kUnknownPod,
       "bind refused (unknown-pod): the API server has no pod ml/trainer"},
      {"the pod was recreated under the same name", [](kube::Pod& p) { p.metadata.uid = "uid-new"; }, true, true,
       BindRefusal::kUidMismatch, "bind refused (uid-mismatch): pod ml/trainer has uid uid-new, not uid-trainer"},
      {"another scheduler's pod", [](kube::Pod& p) { p.spec.scheduler_name = "default-scheduler"; }, true, true,
       BindRefusal::kForeignScheduler,
       "bind refused (foreign-scheduler): pod ml/trainer has schedulerName \"default-scheduler\", not \"topofit\""},
      {"no schedulerName at all is not topofit's", [](kube::Pod& p) { p.spec.scheduler_name.clear(); }, true, true,
       BindRefusal::kForeignScheduler, "schedulerName \"\""},
      {"a pod without GPUs", [](kube::Pod& p) { p.spec.containers.clear(); }, true, true, BindRefusal::kNoGpuRequest,
       "bind refused (no-gpu-request): pod ml/trainer requests no nvidia.com/gpu"},
      {"an unreadable annotation", [](kube::Pod& p) { p.metadata.annotations["topofit.io/min-link"] = "fast"; }, true,
       true, BindRefusal::kInvalidPod, "bind refused (invalid-pod): pod ml/trainer: "},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      kube::Pod pod = gpu_pod;
      row.change(pod);
      const BindAuthorization verdict = AuthorizeBind(args, row.pod_exists ? &pod : nullptr, row.node_known, "topofit");
      CHECK(verdict.refusal == row.refusal);
      CHECK_THAT(verdict.reason, Catch::Contains(row.reason));
      if (!row.refusal) CHECK(verdict.demand.request.gpus == 4);  // read from the stored pod
    }
  }
}

TEST_CASE("A pod whose GPUs come from ResourceClaims is bound when the extender reads claims", "[bind_authorization][dra]") {
  kube::Pod pod = MakePod().name("p").schedulerName("topofit");
  pod.spec.resource_claims.push_back({.name = "gpus", .resource_claim_name = std::nullopt,
                                      .resource_claim_template_name = "two-gpus"});
  const codec::ExtenderBindingArgs args{"p", "default", "uid-p", "n1"};
  const BindAuthorization claims = AuthorizeBind(args, &pod, true, "topofit", /*judges_claims=*/true);
  CHECK_FALSE(claims.refusal.has_value());
  CHECK_FALSE(claims.demand.wants_gpus());  // the DRA plugin allocated its devices: bind takes none
  // Without --dra the extender does not know what it asks: refused as a pod asking no GPU.
  CHECK(AuthorizeBind(args, &pod, true, "topofit").refusal == BindRefusal::kNoGpuRequest);
  // And a pod naming no claim is refused either way.
  pod.spec.resource_claims.clear();
  const BindAuthorization none = AuthorizeBind(args, &pod, true, "topofit", true);
  CHECK(none.refusal == BindRefusal::kNoGpuRequest);
  CHECK_THAT(none.reason, Catch::Contains("requests no nvidia.com/gpu and names no ResourceClaim"));
  CHECK(AuthorizeBind(args, &pod, false, "topofit", true).refusal == BindRefusal::kUnknownNode);
}

TEST_CASE("The scheduler name is the configured one, not a fixed string", "[bind_authorization]") {
  const kube::Pod pod = MakePod().name("p").gpus(1).schedulerName("gpu-scheduler");
  const codec::ExtenderBindingArgs args{"p", "default", "uid-p", "n1"};
  CHECK(AuthorizeBind(args, &pod, true, "topofit").refusal == BindRefusal::kForeignScheduler);
  CHECK_FALSE(AuthorizeBind(args, &pod, true, "gpu-scheduler").refusal.has_value());
}

}  // namespace
}  // namespace topofit::scheduler
