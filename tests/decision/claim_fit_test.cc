#include "decision/claim_fit.h"

#include <random>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "decision/prioritize.h"
#include "scheduler/gpu_state.h"
#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakeNode;
using scheduler::GpuState;
using scheduler::NewInMemoryGpuState;
using scheduler::PodRef;
using topology::GpuSet;

GpuSet Ids(const std::string& text) { return GpuSet::Parse(text, 8).value(); }

// A node of the catalog's `instance_type` with `held` taken by another pod.
std::shared_ptr<const NodeGpuSnapshot> Node(GpuState& state, const std::string& instance_type, GpuSet held = {}) {
  REQUIRE(state.UpsertNode(MakeNode().name("n").label("node.kubernetes.io/instance-type", instance_type).gpus(8)).ok());
  if (!held.empty()) REQUIRE(state.Assume(PodRef{"holder", "ml", "holder"}, "n", held).ok());
  return state.Snapshot("n");
}

// The node's slice as NVIDIA's driver publishes it: GPU i under PCIe root roots[i] (unqualified attributes in the
// driver's domain, pcieRoot qualified with Kubernetes' as the driver writes it).
std::vector<SliceGpu> Slice(const std::vector<std::string>& roots, const std::string& product = "NVIDIA A100-SXM4-80GB") {
  std::vector<SliceGpu> gpus;
  for (size_t i = 0; i < roots.size(); ++i) {
    SliceGpu gpu{.index = static_cast<int>(i), .device = {}};
    gpu.device.name = absl::StrCat("gpu-", i);
    gpu.device.attributes["index"].int_value = static_cast<int64_t>(i);
    gpu.device.attributes["productName"].string_value = product;
    gpu.device.attributes["resource.kubernetes.io/pcieRoot"].string_value = roots[i];
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

// Pairs of GPUs on one root, as on an A100 HGX board: 0,1 | 2,3 | 4,5 | 6,7.
const std::vector<std::string> kPairedRoots = {"pci0", "pci0", "pci1", "pci1", "pci2", "pci2", "pci3", "pci3"};

ClaimGpuDemand TwoOnOneRoot() {
  return ClaimGpuDemand{.gpus = 2, .all = false, .selectors = {}, .match_attributes = {"resource.kubernetes.io/pcieRoot"}};
}

TEST_CASE("Claims with matchAttribute pcieRoot: a set under one root, or a refusal naming the constraint", "[claim_fit]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  SECTION("an empty node: two GPUs of one root") {
    const auto node = Node(*state, "p4d.24xlarge");
    const ClaimNodeVerdict judged = JudgeClaimsOnNode(TwoOnOneRoot(), GpuDemand{}, Slice(kPairedRoots), *node);
    REQUIRE(judged.verdict.fits);
    CHECK(judged.reason.empty());
    CHECK(judged.demand.request.gpus == 2);
    const std::vector<topology::GpuId> chosen = judged.verdict.chosen->gpus.ids();
    REQUIRE(chosen.size() == 2);
    CHECK(kPairedRoots[chosen[0].value] == kPairedRoots[chosen[1].value]);
    // The score reads what the set leaves free on the whole node: 6 GPUs.
    CHECK(judged.verdict.chosen->leftover.size() == 6);
    CHECK(PrioritizeScore(judged.demand, judged.verdict, *node->topology) > kMinExtenderScore);
  }
  SECTION("one free GPU under each root: refused, and preemption could help") {
    const auto node = Node(*state, "p4d.24xlarge", Ids("0,2,4,6"));
    const ClaimNodeVerdict judged = JudgeClaimsOnNode(TwoOnOneRoot(), GpuDemand{}, Slice(kPairedRoots), *node);
    CHECK_FALSE(judged.verdict.fits);
    CHECK_FALSE(judged.verdict.unresolvable);
    CHECK(judged.verdict.refusal == Refusal::kGpuCount);
    CHECK_THAT(judged.reason, Catch::StartsWith("topofit: the claim's matchAttribute resource.kubernetes.io/pcieRoot "
                                                "needs 2 GPUs sharing one value; at most 1 free GPUs share one here"));
    // Without the constraint the four free GPUs would do.
    ClaimGpuDemand unconstrained = TwoOnOneRoot();
    unconstrained.match_attributes.clear();
    CHECK(JudgeClaimsOnNode(unconstrained, GpuDemand{}, Slice(kPairedRoots), *node).verdict.fits);
  }
  SECTION("every root has one GPU: never, whatever is evicted") {
    const auto node = Node(*state, "p4d.24xlarge");
    const ClaimNodeVerdict judged = JudgeClaimsOnNode(
        TwoOnOneRoot(), GpuDemand{}, Slice({"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"}), *node);
    CHECK_FALSE(judged.verdict.fits);
    CHECK(judged.verdict.unresolvable);
    CHECK_THAT(judged.reason, Catch::Contains("(and never more than 1)"));
  }
  SECTION("too few free GPUs at all: the count's own words") {
    const auto node = Node(*state, "p4d.24xlarge", Ids("0,1,2,3,4,5,6"));
    const ClaimNodeVerdict judged = JudgeClaimsOnNode(TwoOnOneRoot(), GpuDemand{}, Slice(kPairedRoots), *node);
    CHECK_FALSE(judged.verdict.fits);
    CHECK_THAT(judged.reason, Catch::StartsWith("topofit: needs 2 GPUs, 1 free"));
  }
}

TEST_CASE("Claims' selectors restrict the GPUs, All takes every matching one, no slice no GPUs", "[claim_fit]") {
  std::unique_ptr<GpuState> state = NewInMemoryGpuState();
  const auto node = Node(*state, "p4d.24xlarge", Ids("7"));
  const DeviceSelector h100{.driver = std::nullopt,
                            .attributes = {{.domain = "gpu.nvidia.com", .name = "productName", .value = "NVIDIA H100 80GB HBM3"}}};
  ClaimGpuDemand demand{.gpus = 1, .all = false, .selectors = {h100}, .match_attributes = {}};
  ClaimNodeVerdict judged = JudgeClaimsOnNode(demand, GpuDemand{}, Slice(kPairedRoots), *node);
  CHECK_FALSE(judged.verdict.fits);
  CHECK(judged.verdict.unresolvable);
  CHECK_THAT(judged.reason, Catch::StartsWith("topofit: the claims need 1 GPUs that meet their selectors, the node has 0"));
  CHECK(JudgeClaimsOnNode(demand, GpuDemand{}, Slice(kPairedRoots, "NVIDIA H100 80GB HBM3"), *node).verdict.fits);

  // All: the 8 GPUs, one of which is taken.
  demand = ClaimGpuDemand{.gpus = 0, .all = true, .selectors = {}, .match_attributes = {}};
  judged = JudgeClaimsOnNode(demand, GpuDemand{}, Slice(kPairedRoots), *node);
  CHECK(judged.demand.request.gpus == 8);
  CHECK_FALSE(judged.verdict.fits);
  CHECK_FALSE(judged.verdict.unresolvable);

  judged = JudgeClaimsOnNode(TwoOnOneRoot(), GpuDemand{}, {}, *node);
  CHECK_FALSE(judged.verdict.fits);
  CHECK_THAT(judged.reason, Catch::StartsWith("topofit: no ResourceSlice of gpu.nvidia.com lists this node's GPUs"));
}

TEST_CASE("Claims with matchAttribute get the best set of all that share one value (brute force)", "[claim_fit]") {
  // g5.48xlarge is PCIe only: sets differ in bandwidth and weakest link, so which root wins matters.
  std::mt19937 random(37);
  for (int round = 0; round < 300; ++round) {
    std::unique_ptr<GpuState> state = NewInMemoryGpuState();
    const GpuSet held = GpuSet::FromMask(random() & 0xff);
    const auto node = Node(*state, round % 2 == 0 ? "g5.48xlarge" : "p4d.24xlarge", held);
    std::vector<std::string> roots;
    for (int i = 0; i < 8; ++i) roots.push_back(absl::StrCat("r", random() % 3));
    const int k = 1 + static_cast<int>(random() % 4);
    ClaimGpuDemand demand = TwoOnOneRoot();
    demand.gpus = k;
    const ClaimNodeVerdict judged = JudgeClaimsOnNode(demand, GpuDemand{}, Slice(roots), *node);

    // Every k-set of free GPUs under one root, and the best quality among them.
    std::optional<topology::SetQuality> best;
    const GpuSet free = node->free();
    for (uint32_t mask = 0; mask < 256; ++mask) {
      const GpuSet set = GpuSet::FromMask(mask);
      if (set.size() != k || !free.contains(set)) continue;
      bool one_root = true;
      for (const topology::GpuId id : set.ids()) one_root = one_root && roots[id.value] == roots[set.ids()[0].value];
      if (!one_root) continue;
      const topology::SetQuality quality = node->topology->quality().Of(set);
      if (!best || quality.bandwidth_mbps > best->bandwidth_mbps ||
          (quality.bandwidth_mbps == best->bandwidth_mbps && quality.weakest < best->weakest)) {
        best = quality;
      }
    }
    INFO("round " << round << ", k " << k << ", held " << held.ToString());
    REQUIRE(judged.verdict.fits == best.has_value());
    if (!best) continue;
    const GpuSet chosen = judged.verdict.chosen->gpus;
    CHECK(free.contains(chosen));
    for (const topology::GpuId id : chosen.ids()) CHECK(roots[id.value] == roots[chosen.ids()[0].value]);
    CHECK(judged.verdict.chosen->quality == *best);
  }
}

}  // namespace
}  // namespace topofit::decision
