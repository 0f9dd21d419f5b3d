#pragma once

// v1beta1.DevicePlugin for the GPU resource: a thin adapter between the kubelet's calls and pod_choice.h.
//
//   GetDevicePluginOptions  get_preferred_allocation_available
//   ListAndWatch            every device at once, then the whole list again on each health change
//   GetPreferredAllocation  the extender's choice for the pod being admitted, else topofit's allocator
//   Allocate                the devices the kubelet chose, as --device-list-strategy says; the pod they
//                           are for is marked given and recorded (`topofit.io/gpu-allocated`)
//   PreStartContainer       nothing to do (not asked for)
//
// Bad requests (unknown or repeated device IDs, sizes the node cannot meet) are INVALID_ARGUMENT with the
// reason, logged, and change nothing.

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <utility>

#include <spdlog/logger.h>

#include "agent/agent_metrics.h"
#include "agent/device_plugin_wire.h"
#include "agent/device_table.h"
#include "agent/node_pods.h"
#include "history/recorder.h"
#include "proto/deviceplugin_v1beta1.grpc.pb.h"
#include "server/clock.h"

namespace topofit::agent {

// ListAndWatch streams served at once. The kubelet holds one (a second one briefly when it restarts,
// until it notices the old one gone); each stream holds a thread of the socket's gRPC server, so a client
// opening more cannot take the threads Allocate needs: beyond this, ListAndWatch is RESOURCE_EXHAUSTED at
// once.
inline constexpr int kMaxListAndWatchStreams = 4;

// Called once per Allocate matched to a pod, with the GPUs given (to write `topofit.io/gpu-allocated`).
using AllocationRecorder = std::function<void(const ChosenPod& pod, topology::GpuSet given)>;

// Where the service records its answers to the kubelet as decisions (history/from_decisions.h): each
// GetPreferredAllocation container answer and each Allocate container. No recorder: nowhere.
struct AllocationHistory {
  history::DecisionRecorder* recorder = nullptr;
  std::string node;
  const server::Clock* clock = nullptr;  // set with a recorder
};

class DevicePluginService final : public v1beta1::DevicePlugin::Service {
 public:
  // Every reference must outlive the service.
  DevicePluginService(const DeviceTable& devices, NodePods& pods, AgentMetrics& metrics, spdlog::logger& log,
                      DeviceListStrategies strategies, AllocationRecorder record);

  // Set before serving; the recorder must outlive the service and never block.
  void RecordDecisionsTo(AllocationHistory history) { history_ = std::move(history); }

  // Ends the ListAndWatch streams (before the gRPC server shuts down, which waits for them).
  void Stop() { stopping_ = true; }

  grpc::Status GetDevicePluginOptions(grpc::ServerContext* context, const v1beta1::Empty* request,
                                      v1beta1::DevicePluginOptions* response) override;
  grpc::Status ListAndWatch(grpc::ServerContext* context, const v1beta1::Empty* request,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override;
  grpc::Status GetPreferredAllocation(grpc::ServerContext* context, const v1beta1::PreferredAllocationRequest* request,
                                      v1beta1::PreferredAllocationResponse* response) override;
  grpc::Status Allocate(grpc::ServerContext* context, const v1beta1::AllocateRequest* request,
                        v1beta1::AllocateResponse* response) override;
  grpc::Status PreStartContainer(grpc::ServerContext* context, const v1beta1::PreStartContainerRequest* request,
                                 v1beta1::PreStartContainerResponse* response) override;

 private:
  const DeviceTable& devices_;
  NodePods& pods_;
  AgentMetrics& metrics_;
  spdlog::logger& log_;
  const DeviceListStrategies strategies_;
  const AllocationRecorder record_;
  AllocationHistory history_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> streams_{0};  // ListAndWatch calls admitted and not yet ended
  std::mutex allocate_mu_;  // one Allocate at a time: a pod is matched and marked given in one step
};

// absl's codes are gRPC's codes, number for number.
grpc::Status ToGrpc(const absl::Status& status);

}  // namespace topofit::agent
