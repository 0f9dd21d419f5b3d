#include "agent/kubelet_socket.h"

#include <sys/stat.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "proto/deviceplugin_v1beta1.grpc.pb.h"

namespace topofit::agent {
namespace {

// How long a stopping server lets ListAndWatch streams notice before cancelling them.
constexpr absl::Duration kStopGrace = absl::Milliseconds(200);

std::chrono::system_clock::time_point Deadline(absl::Duration from_now) {
  return absl::ToChronoTime(absl::Now() + from_now);
}

}  // namespace

absl::Status RegisterWithKubelet(const std::string& kubelet_socket, const v1beta1::RegisterRequest& request,
                                 absl::Duration timeout) {
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel(absl::StrCat("unix://", kubelet_socket), grpc::InsecureChannelCredentials());
  std::unique_ptr<v1beta1::Registration::Stub> stub = v1beta1::Registration::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(Deadline(timeout));
  v1beta1::Empty reply;
  const grpc::Status status = stub->Register(&context, request, &reply);
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat("registering with the kubelet at ", kubelet_socket, ": ", status.error_message()));
}

PluginSocket::PluginSocket(grpc::Service& service, std::string path) : service_(service), path_(std::move(path)) {}

PluginSocket::~PluginSocket() { Stop(); }

absl::Status PluginSocket::Start() {
  Stop();
  unlink(path_.c_str());  // a socket file left by an earlier process refuses the bind
  grpc::ServerBuilder builder;
  builder.AddListeningPort(absl::StrCat("unix://", path_), grpc::InsecureServerCredentials());
  builder.RegisterService(&service_);
  grpc::ResourceQuota quota("device-plugin");
  quota.SetMaxThreads(kPluginSocketThreads);
  builder.SetResourceQuota(quota);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr) return absl::UnavailableError(absl::StrCat("cannot serve the device plugin on ", path_));
  return absl::OkStatus();
}

void PluginSocket::Stop() {
  if (server_ == nullptr) return;
  server_->Shutdown(Deadline(kStopGrace));
  server_->Wait();
  server_.reset();
  unlink(path_.c_str());
}

FileIdentity IdentityOf(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return {};
  return {true, static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
}

}  // namespace topofit::agent
