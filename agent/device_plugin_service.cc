#include "agent/device_plugin_service.h"

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/kubelet_socket.h"
#include "history/from_decisions.h"
#include "server/logging.h"

namespace topofit::agent {
namespace {

// How often a ListAndWatch stream checks for a cancelled call or a stopping service between changes.
constexpr absl::Duration kStreamPoll = absl::Milliseconds(100);

static_assert(kMaxListAndWatchStreams < kPluginSocketThreads,
              "the streams must leave the socket's gRPC server threads for Allocate");

}  // namespace

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

DevicePluginService::DevicePluginService(const DeviceTable& devices, NodePods& pods, AgentMetrics& metrics,
                                         spdlog::logger& log, DeviceListStrategies strategies,
                                         AllocationRecorder record)
    : devices_(devices),
      pods_(pods),
      metrics_(metrics),
      log_(log),
      strategies_(strategies),
      record_(std::move(record)) {}

grpc::Status DevicePluginService::GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                                         v1beta1::DevicePluginOptions* response) {
  *response = PluginOptions();
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::ListAndWatch(grpc::ServerContext* context, const v1beta1::Empty*,
                                               grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) {
  if (streams_.fetch_add(1) >= kMaxListAndWatchStreams) {
    streams_.fetch_sub(1);
    metrics_.streams_refused.Inc();  // not logged: a client opening streams in a loop would flood the log
    return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                        absl::StrCat(kMaxListAndWatchStreams,
                                     " ListAndWatch streams are open already, the most this device plugin serves "
                                     "(the kubelet holds one); close one first"));
  }
  metrics_.streams.Add(1);
  const absl::Cleanup ended = [this] {
    streams_.fetch_sub(1);
    metrics_.streams.Add(-1);
  };
  int64_t sent = 0;  // version 0 is "nothing discovered": nothing to send
  while (!stopping_ && !context->IsCancelled()) {
    const int64_t version = devices_.WaitForChange(sent, kStreamPoll);
    if (version == sent) continue;
    const DeviceSnapshot snapshot = devices_.Snapshot();
    if (!writer->Write(ListAndWatchResponseOf(snapshot))) break;  // the kubelet went away
    sent = snapshot.version;
    server::LogEvent(log_, "list_and_watch",
                     {{"devices", snapshot.devices.size()},
                      {"healthy", snapshot.Healthy().size()}});
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::GetPreferredAllocation(grpc::ServerContext*,
                                                         const v1beta1::PreferredAllocationRequest* request,
                                                         v1beta1::PreferredAllocationResponse* response) {
  const DeviceSnapshot devices = devices_.Snapshot();
  const std::vector<ChosenPod> waiting =
      devices.topology ? pods_.Waiting(*devices.topology) : std::vector<ChosenPod>{};
  for (const v1beta1::ContainerPreferredAllocationRequest& container : request->container_requests()) {
    absl::StatusOr<PreferredDevices> preferred = PreferDevices(devices, waiting, ContainerRequestOf(container));
    if (!preferred.ok()) {
      metrics_.preferred.Inc({"error"});
      server::LogEvent(log_, "preferred_allocation", {{"result", "error"}, {"error", std::string(preferred.status().message())}},
                       spdlog::level::warn);
      return ToGrpc(preferred.status());
    }
    const bool honoured = preferred->pod != nullptr;
    metrics_.preferred.Inc({honoured ? "honoured" : "fallback"});
    server::LogEvent(log_, "preferred_allocation",
                     {{"result", honoured ? "honoured" : "fallback"},
                      {"pod", honoured ? preferred->pod->key : ""},
                      {"size", container.allocation_size()},
                      {"devices", absl::StrJoin(preferred->device_ids, ",")}},
                     honoured ? spdlog::level::info : spdlog::level::warn);
    if (history_.recorder != nullptr) {
      absl::StatusOr<topology::GpuSet> gpus = GpusOf(devices, preferred->device_ids, "preferred");
      const history::PodSubject subject = honoured ? history::PodSubject{preferred->pod->uid, preferred->pod->key}
                                                   : history::PodSubject{};
      history_.recorder->Record(history::PreferredAllocationRecord(
          history_.clock->Now(), history_.node, honoured ? &subject : nullptr,
          gpus.ok() ? gpus->ToString() : absl::StrJoin(preferred->device_ids, ",")));
    }
    v1beta1::ContainerPreferredAllocationResponse* out = response->add_container_responses();
    for (std::string& id : preferred->device_ids) out->add_deviceids(std::move(id));
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::Allocate(grpc::ServerContext*, const v1beta1::AllocateRequest* request,
                                           v1beta1::AllocateResponse* response) {
  std::lock_guard<std::mutex> lock(allocate_mu_);
  const DeviceSnapshot devices = devices_.Snapshot();
  const auto refuse = [this](const absl::Status& status) {
    metrics_.allocations.Inc({"error"});
    server::LogEvent(log_, "allocate", {{"result", "error"}, {"error", std::string(status.message())}},
                     spdlog::level::warn);
    return ToGrpc(status);
  };
  if (!devices.topology) return refuse(absl::FailedPreconditionError("no GPUs discovered yet"));
  // Every container's devices checked before any is answered or recorded: a bad request changes nothing.
  std::vector<topology::GpuSet> given;
  topology::GpuSet all;
  for (const v1beta1::ContainerAllocateRequest& container : request->container_requests()) {
    absl::StatusOr<topology::GpuSet> gpus =
        GpusOf(devices, {container.devices_ids().begin(), container.devices_ids().end()}, "devices_ids");
    if (!gpus.ok()) return refuse(gpus.status());
    if (gpus->empty()) return refuse(absl::InvalidArgumentError("devices_ids: no devices"));
    if (!(all & *gpus).empty()) return refuse(absl::InvalidArgumentError("devices_ids: a device in two containers"));
    all = all | *gpus;
    given.push_back(*gpus);
  }
  std::vector<ChosenPod> waiting = pods_.Waiting(*devices.topology);
  for (size_t i = 0; i < given.size(); ++i) {
    const v1beta1::ContainerAllocateRequest& container = request->container_requests(static_cast<int>(i));
    *response->add_container_responses() = ContainerAllocateResponseFor(
        strategies_, {container.devices_ids().begin(), container.devices_ids().end()}, static_cast<int>(i));
    const ChosenPod* pod = PodForAllocation(waiting, given[i]);
    const char* result = pod == nullptr ? "unmatched" : pod->chosen == given[i] ? "chosen" : "other_devices";
    metrics_.allocations.Inc({result});
    server::LogEvent(log_, "allocate",
                     {{"result", result},
                      {"pod", pod != nullptr ? pod->key : ""},
                      {"chosen", pod != nullptr ? pod->chosen.ToString() : ""},
                      {"gpus", given[i].ToString()}},
                     pod != nullptr && pod->chosen == given[i] ? spdlog::level::info : spdlog::level::warn);
    if (history_.recorder != nullptr) {
      const history::PodSubject subject = pod != nullptr ? history::PodSubject{pod->uid, pod->key} : history::PodSubject{};
      history_.recorder->Record(history::AllocationRecord(history_.clock->Now(), history_.node,
                                                          pod != nullptr ? &subject : nullptr,
                                                          pod != nullptr ? pod->chosen.ToString() : "",
                                                          given[i].ToString()));
    }
    if (pod == nullptr) continue;
    pods_.MarkGiven(pod->uid);
    record_(*pod, given[i]);
    waiting.erase(waiting.begin() + (pod - waiting.data()));
  }
  return grpc::Status::OK;
}

grpc::Status DevicePluginService::PreStartContainer(grpc::ServerContext*, const v1beta1::PreStartContainerRequest*,
                                                    v1beta1::PreStartContainerResponse*) {
  return grpc::Status::OK;
}

}  // namespace topofit::agent
