#pragma once

// A stand-in for the kubelet's two gRPC faces, on unix sockets in a test's folder:
//   - Registration on <device-plugin dir>/kubelet.sock, recording each RegisterRequest; Restart() does what
//     a restarting kubelet does to the folder (every socket deleted, kubelet.sock recreated);
//   - a client of a plugin's socket, as the kubelet's device manager is;
//   - PodResourcesLister on its own socket, answering List with whatever the test sets.

#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "absl/synchronization/mutex.h"
#include "proto/deviceplugin_v1beta1.grpc.pb.h"
#include "proto/podresources_v1.grpc.pb.h"

namespace topofit::agent::testing {

class FakeKubelet final : public v1beta1::Registration::Service {
 public:
  explicit FakeKubelet(std::string device_plugin_dir) : dir_(std::move(device_plugin_dir)) { Start(); }
  ~FakeKubelet() override { Shutdown(); }

  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest* request, v1beta1::Empty*) override {
    absl::MutexLock lock(&mu_);
    registrations_.push_back(*request);
    return refuse_ ? grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "resource name taken") : grpc::Status::OK;
  }

  std::vector<v1beta1::RegisterRequest> registrations() const {
    absl::MutexLock lock(&mu_);
    return registrations_;
  }
  void RefuseRegistrations(bool refuse) {
    absl::MutexLock lock(&mu_);
    refuse_ = refuse;
  }

  // As the kubelet restarting: its server goes, every socket in the folder is deleted, its socket returns.
  void Restart() {
    Shutdown();
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
      if (entry.is_socket()) std::filesystem::remove(entry.path());
    }
    Start();
  }

  // A client of the plugin socket `endpoint` in the folder, as the device manager dials it.
  std::unique_ptr<v1beta1::DevicePlugin::Stub> Plugin(const std::string& endpoint) const {
    return v1beta1::DevicePlugin::NewStub(
        grpc::CreateChannel("unix://" + dir_ + "/" + endpoint, grpc::InsecureChannelCredentials()));
  }

 private:
  void Start() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + dir_ + "/kubelet.sock", grpc::InsecureServerCredentials());
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  void Shutdown() {
    if (server_ == nullptr) return;
    server_->Shutdown(std::chrono::system_clock::now());
    server_.reset();
  }

  const std::string dir_;
  std::unique_ptr<grpc::Server> server_;
  mutable absl::Mutex mu_;
  std::vector<v1beta1::RegisterRequest> registrations_ ABSL_GUARDED_BY(mu_);
  bool refuse_ ABSL_GUARDED_BY(mu_) = false;
};

class FakePodResources final : public v1::PodResourcesLister::Service {
 public:
  explicit FakePodResources(const std::string& socket) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + socket, grpc::InsecureServerCredentials());
    builder.RegisterService(this);
    server_ = builder.BuildAndStart();
  }
  ~FakePodResources() override { server_->Shutdown(std::chrono::system_clock::now()); }

  // One pod holding `device_ids` of nvidia.com/gpu in its one container.
  void SetHolding(const std::string& namespace_name, const std::string& name, const std::vector<std::string>& device_ids) {
    absl::MutexLock lock(&mu_);
    v1::PodResources* pod = list_.add_pod_resources();
    pod->set_namespace_(namespace_name);
    pod->set_name(name);
    v1::ContainerDevices* devices = pod->add_containers()->add_devices();
    devices->set_resource_name("nvidia.com/gpu");
    for (const std::string& id : device_ids) devices->add_device_ids(id);
  }
  int lists() const {
    absl::MutexLock lock(&mu_);
    return lists_;
  }

  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    absl::MutexLock lock(&mu_);
    ++lists_;
    *response = list_;
    return grpc::Status::OK;
  }

 private:
  std::unique_ptr<grpc::Server> server_;
  mutable absl::Mutex mu_;
  v1::ListPodResourcesResponse list_ ABSL_GUARDED_BY(mu_);
  int lists_ ABSL_GUARDED_BY(mu_) = 0;
};

// The kubelet's calls for one container, each within 5 s; `devices` gets the one container's answer.
inline grpc::Status Preferred(v1beta1::DevicePlugin::Stub& plugin, const std::vector<std::string>& available, int size,
                       std::vector<std::string>* devices) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1beta1::PreferredAllocationRequest request;
  v1beta1::ContainerPreferredAllocationRequest* container = request.add_container_requests();
  for (const std::string& id : available) container->add_available_deviceids(id);
  container->set_allocation_size(size);
  v1beta1::PreferredAllocationResponse response;
  grpc::Status status = plugin.GetPreferredAllocation(&context, request, &response);
  if (status.ok()) {
    REQUIRE(response.container_responses_size() == 1);
    devices->assign(response.container_responses(0).deviceids().begin(), response.container_responses(0).deviceids().end());
  }
  return status;
}

inline grpc::Status Allocate(v1beta1::DevicePlugin::Stub& plugin, const std::vector<std::vector<std::string>>& containers,
                      v1beta1::AllocateResponse* response) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1beta1::AllocateRequest request;
  for (const std::vector<std::string>& ids : containers) {
    v1beta1::ContainerAllocateRequest* container = request.add_container_requests();
    for (const std::string& id : ids) container->add_devices_ids(id);
  }
  return plugin.Allocate(&context, request, response);
}

// The kubelet admitting one pod's one container: the preferred devices among `available`, then Allocate.
inline std::vector<std::string> Admit(v1beta1::DevicePlugin::Stub& plugin, const std::vector<std::string>& available, int size) {
  std::vector<std::string> preferred;
  const grpc::Status status = Preferred(plugin, available, size, &preferred);
  INFO(status.error_message());
  REQUIRE(status.ok());
  v1beta1::AllocateResponse response;
  REQUIRE(Allocate(plugin, {preferred}, &response).ok());
  return preferred;
}

}  // namespace topofit::agent::testing
