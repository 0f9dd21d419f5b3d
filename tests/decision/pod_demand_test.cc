#include "decision/pod_demand.h"

#include <catch2/catch.hpp>

#include "tests/kube/builders.h"

namespace topofit::decision {
namespace {

using kube::testing::MakePod;
using topology::LinkClass;

TEST_CASE("demand reads GPUs and the topofit.io annotations", "[pod_demand]") {
  absl::StatusOr<GpuDemand> none = DemandOf(MakePod());
  REQUIRE(none.ok());
  CHECK_FALSE(none->wants_gpus());

  absl::StatusOr<GpuDemand> demand = DemandOf(MakePod()
                                                   .gpus(4)
                                                   .annotation("topofit.io/min-link", "nv")
                                                   .annotation("topofit.io/min-bandwidth", "200GB/s")
                                                   .annotation("topofit.io/topology-policy", "required"));
  REQUIRE(demand.ok());
  CHECK(demand->request.gpus == 4);
  CHECK(demand->request.min_link == LinkClass::kNvLink);
  CHECK(demand->request.min_bandwidth_mbps == 200'000);
  CHECK(demand->policy == TopologyPolicy::kRequired);
  CHECK(EnforcedRequest(*demand).min_link == LinkClass::kNvLink);

  // preferred (the default) ranks by the constraints but does not enforce them
  absl::StatusOr<GpuDemand> preferred = DemandOf(MakePod().gpus(2).annotation("topofit.io/min-link", "PIX"));
  REQUIRE(preferred.ok());
  CHECK(preferred->policy == TopologyPolicy::kPreferred);
  CHECK(EnforcedRequest(*preferred).min_link == LinkClass::kSys);
  CHECK(EnforcedRequest(*preferred).gpus == 2);
  CHECK_FALSE(preferred->expected_runtime.has_value());

  absl::StatusOr<GpuDemand> timed = DemandOf(MakePod().gpus(4).annotation("topofit.io/expected-runtime", "1h30m"));
  REQUIRE(timed.ok());
  CHECK(timed->expected_runtime == absl::Minutes(90));
}

TEST_CASE("demand rejects malformed annotations by name", "[pod_demand]") {
  struct Row {
    const char* name;
    const char* key;
    const char* value;
  };
  const Row rows[] = {
      {"unknown link", "topofit.io/min-link", "FASTEST"},
      {"self is not a link", "topofit.io/min-link", "X"},
      {"bandwidth without unit", "topofit.io/min-bandwidth", "200"},
      {"unknown policy", "topofit.io/topology-policy", "sometimes"},
      {"runtime without unit", "topofit.io/expected-runtime", "90"},
      {"negative runtime", "topofit.io/expected-runtime", "-5m"},
      {"infinite runtime", "topofit.io/expected-runtime", "inf"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      absl::StatusOr<GpuDemand> demand = DemandOf(MakePod().gpus(1).annotation(row.key, row.value));
      REQUIRE_FALSE(demand.ok());
      CHECK(demand.status().code() == absl::StatusCode::kInvalidArgument);
      CHECK_THAT(std::string(demand.status().message()), Catch::Contains(row.key) && Catch::Contains(row.value));
    }
  }
}

}  // namespace
}  // namespace topofit::decision
