#include "kube/pod_resources.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "tests/kube/builders.h"
#include "tests/kube/status_matchers.h"

namespace topofit::kube {
namespace {

using testing::MakeContainer;
using testing::MakePod;

TEST_CASE("GpuRequest aggregates containers, init containers, sidecars and overhead", "[pod_resources]") {
  struct Row {
    const char* name;
    Pod pod;
    int gpus;
  };
  const Row rows[] = {
      {"no containers", MakePod(), 0},
      {"one container", MakePod().gpus(4), 4},
      {"containers add up",  // 2 + 3
       MakePod().container(MakeContainer("a").gpus(2)).container(MakeContainer("b").gpus(3)), 5},
      {"container without GPUs", MakePod().container(MakeContainer("cpu-only").cpu("2")), 0},
      {"request wins over limit",  // requests[gpu] = 1 is used, limits[gpu] = 2 is not
       MakePod().container(MakeContainer("a").request(kResourceNvidiaGpu, "1").limit(kResourceNvidiaGpu, "2")), 1},
      {"init container below the containers",  // max(regular 4, init 2) = 4
       MakePod().gpus(4).initContainer(MakeContainer("warmup").gpus(2)), 4},
      {"init container above the containers",  // max(regular 1, init 8) = 8
       MakePod().gpus(1).initContainer(MakeContainer("warmup").gpus(8)), 8},
      {"init containers run one at a time",  // max(regular 1, init max(3, 2)) = 3
       MakePod().gpus(1).initContainer(MakeContainer("i1").gpus(3)).initContainer(MakeContainer("i2").gpus(2)), 3},
      {"sidecar runs beside the containers",  // regular 2 + sidecar 1 = 3; init peak 1
       MakePod().gpus(2).initContainer(MakeContainer("proxy").gpus(1).sidecar()), 3},
      {"init container after a sidecar runs beside it",  // init: sidecar 1 + i 4 = 5; regular 2 + 1 = 3
       MakePod().gpus(2).initContainer(MakeContainer("proxy").gpus(1).sidecar()).initContainer(
           MakeContainer("load").gpus(4)),
       5},
      {"init container before a sidecar does not",  // init max(4, sidecar 1) = 4; regular 2 + 1 = 3
       MakePod().gpus(2).initContainer(MakeContainer("load").gpus(4)).initContainer(
           MakeContainer("proxy").gpus(1).sidecar()),
       4},
      {"sidecars accumulate",  // init: s1 2, s2 2+1 = 3, i 2+1+2 = 5; regular 1 + 2 + 1 = 4 -> max 5
       MakePod()
           .gpus(1)
           .initContainer(MakeContainer("s1").gpus(2).sidecar())
           .initContainer(MakeContainer("s2").gpus(1).sidecar())
           .initContainer(MakeContainer("i").gpus(2)),
       5},
      {"overhead is added after the max",  // max(2, 3) + 1
       MakePod().gpus(2).initContainer(MakeContainer("i").gpus(3)).overhead(kResourceNvidiaGpu, "1"), 4},
      {"pod-level resources do not apply to GPUs",  // the container's 2, not the pod-level 8
       MakePod().gpus(2).podRequest(kResourceNvidiaGpu, "8").podLimit(kResourceNvidiaGpu, "8"), 2},
      {"fractional sum of milli-GPUs is still whole in each container",  // 1000m + 2
       MakePod().container(MakeContainer("a").request(kResourceNvidiaGpu, "1000m")).gpus(2), 3},
  };
  for (const Row& row : rows) {
    SECTION(row.name) {
      const absl::StatusOr<int> gpus = GpuRequest(row.pod);
      REQUIRE_OK(gpus);
      CHECK(*gpus == row.gpus);
    }
  }
}

TEST_CASE("GpuRequest rejects fractional and negative GPUs", "[pod_resources]") {
  struct Row {
    const char* name;
    Pod pod;
    const char* message;
  };
  const Row rows[] = {
      {"fractional request", MakePod().container(MakeContainer("a").request(kResourceNvidiaGpu, "500m")),
       "container \"a\" requests nvidia.com/gpu: 500m is not a whole"},
      {"fractional limit", MakePod().container(MakeContainer("a").limit(kResourceNvidiaGpu, "1.5")),
       "container \"a\" limits nvidia.com/gpu: 1500m"},
      {"negative", MakePod().container(MakeContainer("a").request(kResourceNvidiaGpu, "-1")),
       "container \"a\" requests nvidia.com/gpu: -1000m"},
      {"fractional init container",
       MakePod().gpus(1).initContainer(MakeContainer("i").limit(kResourceNvidiaGpu, "0.5")),
       "init container \"i\" limits"},
      {"fractional overhead", MakePod().gpus(1).overhead(kResourceNvidiaGpu, "100m"), "overhead nvidia.com/gpu: 100m"},
      {"more than an int", MakePod().gpus(1).overhead(kResourceNvidiaGpu, "3G"), "pod requests 3000000001 GPUs"},
  };
  for (const Row& row : rows) {
    SECTION(row.name) { CHECK_STATUS(GpuRequest(row.pod), absl::StatusCode::kInvalidArgument, row.message); }
  }
}

TEST_CASE("EffectiveRequestMilli applies pod-level resources to cpu, memory and hugepages only",
          "[pod_resources]") {
  struct Row {
    const char* name;
    Pod pod;
    const char* resource;
    int64_t milli;
  };
  const Row rows[] = {
      {"containers without pod-level resources",  // 250m + 500m + overhead 100m
       MakePod().container(MakeContainer("a").cpu("250m")).container(MakeContainer("b").cpu("500m")).overhead(
           kResourceCpu, "100m"),
       kResourceCpu, 850},
      {"pod-level request replaces the containers",  // pod-level 2 cores, not 250m; + overhead 100m
       MakePod().container(MakeContainer("a").cpu("250m")).podRequest(kResourceCpu, "2").overhead(kResourceCpu, "100m"),
       kResourceCpu, 2100},
      {"pod-level limit stands in for an unset pod-level request",  // defaulting copies the limit: 1Gi
       MakePod().container(MakeContainer("a").request(kResourceMemory, "256Mi")).podLimit(kResourceMemory, "1Gi"),
       kResourceMemory, 1073741824000},
      {"pod-level cpu leaves memory to the containers",  // memory from the container: 256Mi
       MakePod().container(MakeContainer("a").request(kResourceMemory, "256Mi")).podRequest(kResourceCpu, "1"),
       kResourceMemory, 268435456000},
      {"hugepages pod-level request",  // pod-level 1Gi of 2Mi pages
       MakePod().container(MakeContainer("a").limit("hugepages-2Mi", "512Mi")).podRequest("hugepages-2Mi", "1Gi"),
       "hugepages-2Mi", 1073741824000},
      {"hugepages pod-level limit yields to containers that set them",  // defaulting takes the containers' 512Mi
       MakePod().container(MakeContainer("a").limit("hugepages-2Mi", "512Mi")).podLimit("hugepages-2Mi", "1Gi"),
       "hugepages-2Mi", 536870912000},
      {"hugepages pod-level limit alone",  // no container sets them: the pod-level 1Gi
       MakePod().container(MakeContainer("a").cpu("1")).podLimit("hugepages-2Mi", "1Gi"), "hugepages-2Mi",
       1073741824000},
      {"other resources ignore pod-level values",  // ephemeral-storage from the container: 1G
       MakePod().container(MakeContainer("a").request("ephemeral-storage", "1G")).podRequest("ephemeral-storage", "5G"),
       "ephemeral-storage", 1000000000000},
      {"sidecar cpu",  // regular 1 + sidecar 200m = 1200m; init: 200m + 2 = 2200m -> 2200m
       MakePod()
           .container(MakeContainer("app").cpu("1"))
           .initContainer(MakeContainer("proxy").cpu("200m").sidecar())
           .initContainer(MakeContainer("migrate").cpu("2")),
       kResourceCpu, 2200},
      {"unrequested resource", MakePod().gpus(1), kResourceCpu, 0},
  };
  for (const Row& row : rows) {
    SECTION(row.name) { CHECK(EffectiveRequestMilli(row.pod, row.resource) == row.milli); }
  }
}

TEST_CASE("EffectiveRequestMilli saturates instead of wrapping", "[pod_resources]") {
  // Two containers of 9e15 units each: 9e18 + 9e18 thousandths exceeds INT64_MAX (~9.22e18).
  const Pod pod = MakePod()
                      .container(MakeContainer("a").request("example.com/big", "9P"))
                      .container(MakeContainer("b").request("example.com/big", "9P"));
  CHECK(EffectiveRequestMilli(pod, "example.com/big") == INT64_MAX);
}

}  // namespace
}  // namespace topofit::kube
