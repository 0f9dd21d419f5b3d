#include "decision/slowdown.h"

#include <catch2/catch.hpp>

#include "tests/kube/builders.h"
#include "topology/catalog.h"
#include "topology/set_quality.h"

namespace topofit::decision {
namespace {

TEST_CASE("Stretch is 1 on the best set, for single GPUs and without collectives", "[slowdown]") {
  CHECK(Stretch(100, 100, 0.3) == 1.0);
  CHECK(Stretch(0, 0, 0.9) == 1.0);     // single GPU: no best set to compare with
  CHECK(Stretch(100, 10, 0.0) == 1.0);
  CHECK(Stretch(100, 200, 0.3) == 1.0);  // never faster than ideal
}

TEST_CASE("Stretch charges the collective share by the bandwidth ratio", "[slowdown]") {
  // An 8-GPU job that could have had a DGX A100 (NVSwitch) but runs on a g5.48xlarge (PCIe, across sockets).
  const topology::Topology a100 = *topology::CatalogShape("dgx-a100");
  const topology::Topology g5 = *topology::CatalogShape("g5.48xlarge");
  const int64_t best = a100.quality().BestBandwidth(8);
  const int64_t pcie = g5.quality().Of(g5.all_gpus()).bandwidth_mbps;
  REQUIRE(pcie < best);
  CHECK(Stretch(best, pcie, 0.3) == Approx(0.7 + 0.3 * static_cast<double>(best) / static_cast<double>(pcie)));
  CHECK(Stretch(best, pcie, 1.5) == Approx(static_cast<double>(best) / static_cast<double>(pcie)));  // clamped to 1
}

TEST_CASE("UsefulShare: a slower set wins only when it cuts the job's bill by more than it stretches its run", "[slowdown]") {
  CHECK(UsefulShare(1) == 1.0);
  CHECK(UsefulShare(2) == Approx(0.25));
  // Price per GPU-hour p on a set of stretch s: the job's bill is p·s and its run time s (per unit of
  // work). The slower set is preferred (cheaper per useful GPU-hour) exactly when its bill is smaller by
  // a larger factor than its run time is longer.
  const auto cost_per_useful = [](double price, double stretch) { return price / UsefulShare(stretch); };
  for (const double slow : {1.5, 2.0, 3.0}) {
    for (const double bill_ratio : {1.2, 2.9, 3.1, 10.0}) {  // how many times cheaper the slow set makes the job
      const double fast_price = 10, slow_price = fast_price / (bill_ratio * slow);
      INFO("stretch " << slow << ", job's bill " << bill_ratio << " times smaller");
      CHECK((cost_per_useful(slow_price, slow) < cost_per_useful(fast_price, 1)) == (bill_ratio > slow));
    }
  }
}

TEST_CASE("AssumedCommFraction charges only multi-GPU pods that ask for a topology", "[slowdown]") {
  CHECK(AssumedCommFraction(*DemandOf(kube::testing::MakePod().gpus(4).annotation("topofit.io/min-link", "NV"))) ==
        kAssumedCommFraction);
  CHECK(AssumedCommFraction(*DemandOf(kube::testing::MakePod().gpus(4).annotation("topofit.io/min-bandwidth", "100GB/s"))) ==
        kAssumedCommFraction);
  CHECK(AssumedCommFraction(*DemandOf(kube::testing::MakePod().gpus(4))) == 0);
  CHECK(AssumedCommFraction(*DemandOf(kube::testing::MakePod().gpus(1).annotation("topofit.io/min-link", "NV"))) == 0);
}

}  // namespace
}  // namespace topofit::decision
