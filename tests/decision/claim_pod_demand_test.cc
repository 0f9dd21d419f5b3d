#include "decision/claim_pod_demand.h"

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "tests/decision/claim_builders.h"
#include "tests/kube/builders.h"

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

// A pod asking GPUs by a DeviceClass's own extended resource name (KEP-5004), with the annotations given.
kube::Pod ClassNamedPod(const std::string& device_class, absl::string_view quantity,
                        std::map<std::string, std::string> annotations = {}) {
  kube::testing::PodBuilder pod = kube::testing::MakePod();
  pod.name("server-0").container(kube::testing::MakeContainer("main").limit(
      absl::StrCat("deviceclass.resource.kubernetes.io/", device_class), quantity));
  for (auto& [key, value] : annotations) pod.annotation(key, value);
  return pod.build();
}

TEST_CASE("A pod asking a GPU class's own extended resource asks that many GPUs, as a claim would",
          "[claim_pod_demand]") {
  const Claims none;
  const ClaimSource source = none.Source();  // gpu.nvidia.com is a GPU class by default
  const kube::Pod pod = ClassNamedPod("gpu.nvidia.com", "2", {{"topofit.io/min-link", "NV"}});
  const absl::StatusOr<std::optional<ClaimGpuDemand>> asked = PodClaimDemandOf(pod, *DemandOf(pod), source);
  REQUIRE(asked.ok());
  REQUIRE(asked->has_value());
  CHECK((*asked)->gpus == 2);
  CHECK_FALSE((*asked)->all);
  CHECK((*asked)->selectors.empty());
  CHECK((*asked)->match_attributes.empty());
  const absl::StatusOr<GpuDemand> demand = DemandOnTemplates(pod, &source);
  REQUIRE(demand.ok());
  CHECK(demand->request.gpus == 2);
  CHECK(demand->request.min_link == topology::LinkClass::kNvLink);

  // Another DeviceClass's resource asks no GPU; without a claim source (no --dra) neither does this one.
  const kube::Pod nic = ClassNamedPod("nic.example.com", "2");
  CHECK_FALSE(PodClaimDemandOf(nic, *DemandOf(nic), source)->has_value());
  CHECK_FALSE(DemandOnTemplates(pod, nullptr)->wants_gpus());

  // Once kube-scheduler made and allocated the claim, it maps the resource in the pod's status: the claim
  // holds the GPUs, the pod asks no more.
  kube::Pod scheduled = pod;
  scheduled.status.extended_resource_claim_status = kube::PodExtendedResourceClaimStatus{
      .resource_claim_name = "server-0-extended-resources-x7k2p",
      .request_mappings = {{.container_name = "main",
                            .resource_name = "deviceclass.resource.kubernetes.io/gpu.nvidia.com",
                            .request_name = "container-0-request-0"}}};
  CHECK_FALSE(PodClaimDemandOf(scheduled, *DemandOf(scheduled), source)->has_value());

  // Added to the GPUs of the pod's own claims: one set.
  const Claims claims = Claims().Add(Claim("trainer-0-gpus", {Gpus("gpus", 2)}));
  const ClaimSource with_claim = claims.Source();
  kube::Pod mixed = ClaimPod();
  mixed.spec.containers = pod.spec.containers;
  CHECK(PodClaimDemandOf(mixed, *DemandOf(mixed), with_claim)->value().gpus == 4);
}

TEST_CASE("A class-named GPU request beside nvidia.com/gpu, or of a fraction, is refused", "[claim_pod_demand]") {
  const Claims none;
  const ClaimSource source = none.Source();
  kube::Pod both = ClassNamedPod("gpu.nvidia.com", "1");
  both.spec.containers.push_back(kube::testing::MakeContainer("sidecar").gpus(1).build());
  const absl::StatusOr<std::optional<ClaimGpuDemand>> refused = PodClaimDemandOf(both, *DemandOf(both), source);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("both through nvidia.com/gpu and through"));

  const kube::Pod half = ClassNamedPod("gpu.nvidia.com", "500m");
  const absl::StatusOr<std::optional<ClaimGpuDemand>> fraction = PodClaimDemandOf(half, *DemandOf(half), source);
  REQUIRE_FALSE(fraction.ok());
  CHECK(fraction.status().message() ==
        "container \"main\" limits deviceclass.resource.kubernetes.io/gpu.nvidia.com: 500m is not a whole, "
        "non-negative number of GPUs");
}

}  // namespace
}  // namespace topofit::decision
