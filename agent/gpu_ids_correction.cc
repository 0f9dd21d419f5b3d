#include "agent/gpu_ids_correction.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "agent/pod_choice.h"
#include "kube/topofit_annotations.h"
#include "proto/podresources_v1.grpc.pb.h"

namespace topofit::agent {

std::vector<HeldDevices> HeldByPods(const v1::ListPodResourcesResponse& list, absl::string_view resource_name) {
  std::vector<HeldDevices> held;
  for (const v1::PodResources& pod : list.pod_resources()) {
    HeldDevices devices{pod.namespace_(), pod.name(), {}};
    for (const v1::ContainerResources& container : pod.containers()) {
      for (const v1::ContainerDevices& group : container.devices()) {
        if (group.resource_name() != resource_name) continue;
        devices.device_ids.insert(devices.device_ids.end(), group.device_ids().begin(), group.device_ids().end());
      }
    }
    if (!devices.device_ids.empty()) held.push_back(std::move(devices));
  }
  return held;
}

std::vector<GpuIdsCorrection> CorrectionsFor(const std::vector<HeldDevices>& held, const DeviceSnapshot& devices,
                                             const FindPod& find, int* skipped) {
  std::vector<GpuIdsCorrection> corrections;
  if (!devices.topology) return corrections;
  for (const HeldDevices& pod_devices : held) {
    absl::StatusOr<topology::GpuSet> truth = GpusOf(devices, pod_devices.device_ids, "pod-resources");
    std::optional<kube::Pod> pod = find(pod_devices.namespace_name, pod_devices.name);
    if (!truth.ok() || !pod) {
      if (skipped != nullptr) ++*skipped;
      continue;
    }
    const auto annotation = pod->metadata.annotations.find(kube::kGpuIdsAnnotation);
    const std::string was = annotation == pod->metadata.annotations.end() ? "" : annotation->second;
    absl::StatusOr<topology::GpuSet> claimed = topology::GpuSet::Parse(was, devices.topology->gpu_count());
    if (claimed.ok() && !was.empty() && *claimed == *truth) continue;
    corrections.push_back({pod_devices.namespace_name, pod_devices.name, truth->ToString(), was});
  }
  return corrections;
}

std::vector<GpuIdsCorrection> NotYetSent(const std::vector<GpuIdsCorrection>& corrections,
                                         std::vector<GpuIdsCorrection>* sent) {
  std::vector<GpuIdsCorrection> fresh;
  for (const GpuIdsCorrection& correction : corrections) {
    if (std::find(sent->begin(), sent->end(), correction) == sent->end()) fresh.push_back(correction);
  }
  *sent = corrections;
  return fresh;
}

struct PodResourcesClient::Stub {
  std::unique_ptr<v1::PodResourcesLister::Stub> stub;
};

PodResourcesClient::PodResourcesClient(const std::string& socket, absl::Duration timeout)
    : stub_(std::make_shared<Stub>()), socket_(socket), timeout_(timeout) {
  stub_->stub = v1::PodResourcesLister::NewStub(
      grpc::CreateChannel(absl::StrCat("unix://", socket), grpc::InsecureChannelCredentials()));
}

absl::StatusOr<v1::ListPodResourcesResponse> PodResourcesClient::List() {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
  v1::ListPodResourcesResponse response;
  const grpc::Status status = stub_->stub->List(&context, v1::ListPodResourcesRequest(), &response);
  if (!status.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                        absl::StrCat("pod-resources List at ", socket_, ": ", status.error_message()));
  }
  return response;
}

}  // namespace topofit::agent
