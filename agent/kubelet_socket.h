#pragma once

// The agent's two ends of the device-plugin socket folder: its own DevicePlugin server on a unix socket
// (restartable, since the kubelet deletes the plugins' sockets when it restarts), and the Register call to
// the kubelet's Registration service.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "proto/deviceplugin_v1beta1.pb.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace topofit::agent {

// Registration/Register on the kubelet's socket (a path), within `timeout`. The error carries gRPC's code
// and the kubelet's message.
absl::Status RegisterWithKubelet(const std::string& kubelet_socket, const v1beta1::RegisterRequest& request,
                                 absl::Duration timeout);

// Every thread the socket's gRPC server may run at once (gRPC's sync server otherwise starts one per call
// in progress, without end). A call finding none is refused with RESOURCE_EXHAUSTED; the DevicePlugin
// service holds at most kMaxListAndWatchStreams of them in streams, so the rest are there for the unary
// calls of the kubelet's admissions.
inline constexpr int kPluginSocketThreads = 16;

// `service` served on the unix socket `path`.
class PluginSocket {
 public:
  // `service` must outlive this object.
  PluginSocket(::grpc::Service& service, std::string path);
  ~PluginSocket();  // Stop()s
  PluginSocket(const PluginSocket&) = delete;
  PluginSocket& operator=(const PluginSocket&) = delete;

  // (Re)starts serving: a running server is stopped first, a stale socket file removed.
  absl::Status Start();
  // Stops accepting calls, cancels the ones in flight (ListAndWatch streams end) and removes the file.
  void Stop();

 private:
  ::grpc::Service& service_;
  const std::string path_;
  std::unique_ptr<::grpc::Server> server_;
};

// A file's identity (device, inode, change time): a socket deleted and recreated has another.
struct FileIdentity {
  bool exists = false;
  uint64_t device = 0;
  uint64_t inode = 0;
  int64_t changed_ns = 0;
  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};
FileIdentity IdentityOf(const std::string& path);

}  // namespace topofit::agent
