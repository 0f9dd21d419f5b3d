#include "decision/claim_pod_demand.h"

#include <catch2/catch.hpp>

#include "tests/decision/claim_builders.h"

namespace topofit::decision {
namespace {

using namespace testing;  // NOLINT: the claim builders

// A pod of namespace ml whose GPUs come from the claim trainer-0-gpus, with the annotations given.
kube::Pod ClaimPod(std::map<std::string, std::string> annotations = {}) {
  kube::Pod pod = PodNaming({Named("gpus", "trainer-0-gpus")});
  for (auto& [key, value] : annotations) pod.metadata.annotations[key] = value;
  return pod;
}

TEST_CASE("On templates a claim pod asks its claims' GPUs under its own topology annotations", "[claim_pod_demand]") {
  const Claims claims = Claims().Add(
      Claim("trainer-0-gpus", {Gpus("gpus", 4)}, {MatchAttribute("resource.kubernetes.io/pcieRoot")}));
  const ClaimSource source = claims.Source();
  const kube::Pod pod = ClaimPod({{"topofit.io/min-link", "NV"}, {"topofit.io/topology-policy", "required"}});

  const absl::StatusOr<GpuDemand> demand = DemandOnTemplates(pod, &source);
  REQUIRE(demand.ok());
  CHECK(demand->request.gpus == 4);  // the matchAttribute needs a node's slices: judged there, not here
  CHECK(demand->request.min_link == topology::LinkClass::kNvLink);
  CHECK(demand->constraints_required());

  // Without a claim source (no --dra) the pod asks for no GPU, as it did before claims were read.
  const absl::StatusOr<GpuDemand> blind = DemandOnTemplates(pod, nullptr);
  REQUIRE(blind.ok());
  CHECK_FALSE(blind->wants_gpus());
  CHECK(blind->request.min_link == topology::LinkClass::kNvLink);
}

TEST_CASE("On templates a claim not seen yet leaves the pod as it was, one not judged is an error",
          "[claim_pod_demand]") {
  const Claims none;
  const ClaimSource unseen = none.Source();
  const absl::StatusOr<GpuDemand> waiting = DemandOnTemplates(ClaimPod(), &unseen);
  REQUIRE(waiting.ok());
  CHECK_FALSE(waiting->wants_gpus());

  kube::DeviceRequest alternatives = Gpus("gpus", 2);
  alternatives.first_available = true;
  const Claims odd = Claims().Add(Claim("trainer-0-gpus", {alternatives}));
  const ClaimSource source = odd.Source();
  const absl::StatusOr<GpuDemand> refused = DemandOnTemplates(ClaimPod(), &source);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("ml/trainer-0-gpus"));
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("firstAvailable"));
}

TEST_CASE("A pod asking GPUs through nvidia.com/gpu and through claims is refused, All counts as one GPU",
          "[claim_pod_demand]") {
  const Claims claims = Claims().Add(Claim("trainer-0-gpus", {Gpus("gpus", 2)}));
  const ClaimSource source = claims.Source();
  kube::Pod both = ClaimPod();
  both.spec.containers = kube::testing::MakePod().gpus(1).build().spec.containers;
  const absl::StatusOr<GpuDemand> refused = DemandOnTemplates(both, &source);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("both through nvidia.com/gpu and through"));
  CHECK_FALSE(PodClaimDemandOf(both, *DemandOf(both), source).ok());

  kube::DeviceRequest every = Gpus("gpus", 1);
  every.allocation_mode = "All";
  every.count.reset();
  const Claims all = Claims().Add(Claim("trainer-0-gpus", {every}));
  const ClaimSource whole = all.Source();
  const absl::StatusOr<GpuDemand> demand = DemandOnTemplates(ClaimPod(), &whole);
  REQUIRE(demand.ok());
  CHECK(demand->request.gpus == 1);
}

}  // namespace
}  // namespace topofit::decision
