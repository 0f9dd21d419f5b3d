#pragma once

// The truth about which GPUs each pod holds, from the kubelet's pod-resources API (v1 List), and the
// `topofit.io/gpu-ids` patches that make the pods say it. The extender's live state reads that annotation,
// so after a correction it tracks the node's real occupancy, pods of other schedulers included.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/device_table.h"
#include "kube/objects.h"
#include "proto/podresources_v1.pb.h"

namespace topofit::agent {

// The devices of `resource_name` one pod holds, over all its containers.
struct HeldDevices {
  std::string namespace_name;
  std::string name;
  std::vector<std::string> device_ids;
};

// Pods holding at least one device of `resource_name`.
std::vector<HeldDevices> HeldByPods(const v1::ListPodResourcesResponse& list, absl::string_view resource_name);

struct GpuIdsCorrection {
  std::string namespace_name;
  std::string name;
  std::string gpu_ids;  // the truth, "0,1,4"
  std::string was;      // the annotation before; "" when absent

  bool operator==(const GpuIdsCorrection&) const = default;
};

using FindPod = std::function<std::optional<kube::Pod>(const std::string& namespace_name, const std::string& name)>;

// A correction for every pod whose annotation is absent or names other GPUs than it holds. Pods `find`
// does not know (not bound here, not seen yet) are left for a later round, and so are pods holding device
// IDs this node does not have (`skipped` counts them).
std::vector<GpuIdsCorrection> CorrectionsFor(const std::vector<HeldDevices>& held, const DeviceSnapshot& devices,
                                             const FindPod& find, int* skipped);

// The corrections not sent in an earlier round. The patch is written asynchronously and reaches the pod
// cache through the watch, so a round that starts before then finds the same mismatch again: sending it
// twice would count and log one mismatch twice. `sent` holds what was sent and still showed in the last
// round; it becomes this round's. A correction is new again once the pod's annotation reads otherwise
// (someone changed it after our patch), so nothing is ever dropped for good.
std::vector<GpuIdsCorrection> NotYetSent(const std::vector<GpuIdsCorrection>& corrections,
                                         std::vector<GpuIdsCorrection>* sent);

// A client of the kubelet's pod-resources socket.
class PodResourcesClient {
 public:
  PodResourcesClient(const std::string& socket, absl::Duration timeout);
  absl::StatusOr<v1::ListPodResourcesResponse> List();

 private:
  struct Stub;
  std::shared_ptr<Stub> stub_;
  const std::string socket_;
  const absl::Duration timeout_;
};

}  // namespace topofit::agent
