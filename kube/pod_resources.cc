#include "kube/pod_resources.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace topofit::kube {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? kMax : kMin;
  return sum;
}

const int64_t* Find(const ResourceList& list, absl::string_view resource) {
  const auto it = list.find(resource);
  return it == list.end() ? nullptr : &it->second;
}

// A request, falling back to the limit: the API server's defaulting (SetDefaults_Pod) copies limits into
// unset requests, so this gives the same answer for pods that did and did not pass through it (such as
// hand-built template pods).
const int64_t* Request(const ResourceRequirements& resources, absl::string_view resource) {
  const int64_t* request = Find(resources.requests, resource);
  return request != nullptr ? request : Find(resources.limits, resource);
}

int64_t ContainerRequest(const Container& container, absl::string_view resource) {
  const int64_t* request = Request(container.resources, resource);
  return request == nullptr ? 0 : *request;
}

bool IsSidecar(const Container& container) {
  return container.restart_policy == ContainerRestartPolicy::kAlways;
}

// IsSupportedPodLevelResource upstream: cpu, memory and every hugepages-<size>.
bool IsPodLevelResource(absl::string_view resource) {
  return resource == kResourceCpu || resource == kResourceMemory || absl::StartsWith(resource, "hugepages-");
}

bool AnyContainerSets(const Pod& pod, absl::string_view resource) {
  const auto sets = [&](const Container& c) { return Request(c.resources, resource) != nullptr; };
  return std::any_of(pod.spec.containers.begin(), pod.spec.containers.end(), sets) ||
         std::any_of(pod.spec.init_containers.begin(), pod.spec.init_containers.end(), sets);
}

int64_t ContainerAggregate(const Pod& pod, absl::string_view resource) {
  int64_t regular = 0;
  for (const Container& container : pod.spec.containers) {
    regular = SaturatingAdd(regular, ContainerRequest(container, resource));
  }
  // Init containers run one at a time, but each runs beside the sidecars started before it; sidecars then
  // keep running beside the regular containers.
  int64_t sidecars = 0;
  int64_t init_peak = 0;
  for (const Container& container : pod.spec.init_containers) {
    const int64_t request = ContainerRequest(container, resource);
    if (IsSidecar(container)) {
      sidecars = SaturatingAdd(sidecars, request);
      regular = SaturatingAdd(regular, request);
      init_peak = std::max(init_peak, sidecars);
    } else {
      init_peak = std::max(init_peak, SaturatingAdd(sidecars, request));
    }
  }
  return std::max(regular, init_peak);
}

// The pod-level value that replaces the container aggregate, if any. Upstream reads only
// spec.resources.requests here, after defaulting filled it: for cpu and memory from the pod-level limit;
// for hugepages from the containers' aggregate when a container sets it, else from the pod-level limit.
const int64_t* PodLevelRequest(const Pod& pod, absl::string_view resource) {
  if (!IsPodLevelResource(resource)) return nullptr;
  const ResourceRequirements& resources = pod.spec.resources;
  if (const int64_t* request = Find(resources.requests, resource)) return request;
  const int64_t* limit = Find(resources.limits, resource);
  if (limit == nullptr) return nullptr;
  if (absl::StartsWith(resource, "hugepages-") && AnyContainerSets(pod, resource)) return nullptr;
  return limit;
}

absl::Status CheckWholeGpus(const ResourceList& list, absl::string_view resource, absl::string_view where) {
  const int64_t* milli = Find(list, resource);
  if (milli == nullptr || (*milli >= 0 && *milli % 1000 == 0)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(where, " ", resource, ": ", *milli,
                                                 "m is not a whole, non-negative number of GPUs"));
}

absl::Status CheckWholeGpus(const Container& container, absl::string_view resource, absl::string_view kind) {
  const std::string where = absl::StrCat(kind, " \"", container.name, "\"");
  absl::Status status = CheckWholeGpus(container.resources.requests, resource, absl::StrCat(where, " requests"));
  if (!status.ok()) return status;
  return CheckWholeGpus(container.resources.limits, resource, absl::StrCat(where, " limits"));
}

}  // namespace

int64_t EffectiveRequestMilli(const Pod& pod, absl::string_view resource) {
  const int64_t* pod_level = PodLevelRequest(pod, resource);
  const int64_t requests = pod_level != nullptr ? *pod_level : ContainerAggregate(pod, resource);
  const int64_t* overhead = Find(pod.spec.overhead, resource);
  return overhead == nullptr ? requests : SaturatingAdd(requests, *overhead);
}

absl::StatusOr<int> WholeGpusRequested(const Pod& pod, absl::string_view resource) {
  for (const Container& container : pod.spec.containers) {
    if (absl::Status status = CheckWholeGpus(container, resource, "container"); !status.ok()) return status;
  }
  for (const Container& container : pod.spec.init_containers) {
    if (absl::Status status = CheckWholeGpus(container, resource, "init container"); !status.ok()) return status;
  }
  if (absl::Status status = CheckWholeGpus(pod.spec.overhead, resource, "overhead"); !status.ok()) return status;

  const int64_t milli = EffectiveRequestMilli(pod, resource);
  if (milli / 1000 > std::numeric_limits<int>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("pod requests ", milli / 1000, " GPUs"));
  }
  return static_cast<int>(milli / 1000);
}

absl::StatusOr<int> GpuRequest(const Pod& pod) { return WholeGpusRequested(pod, kResourceNvidiaGpu); }

std::string ExtendedResourceClaim(const Pod& pod, absl::string_view resource) {
  const std::optional<PodExtendedResourceClaimStatus>& extended = pod.status.extended_resource_claim_status;
  if (!extended) return std::string();
  for (const ContainerExtendedResourceRequest& mapping : extended->request_mappings) {
    if (mapping.resource_name == resource) return extended->resource_claim_name;
  }
  return std::string();
}

std::string GpuExtendedResourceClaim(const Pod& pod) { return ExtendedResourceClaim(pod, kResourceNvidiaGpu); }

std::string DeviceClassResourceName(absl::string_view device_class) {
  return absl::StrCat(kDeviceClassResourcePrefix, device_class);
}

}  // namespace topofit::kube
