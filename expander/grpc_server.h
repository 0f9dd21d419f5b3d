#pragma once

// The expander's gRPC server: TLS by default (cluster-autoscaler refuses to talk to it any other way),
// optionally requiring client certificates, plaintext only when asked for explicitly. TLS 1.2 and 1.3 with
// forward-secret AEAD suites only, as every topofit server (server/tls_context.h): gRPC's own suite list,
// which it takes from nowhere but the GRPC_SSL_CIPHER_SUITES environment variable, so the server refuses
// to start with that variable set rather than serve with suites nobody reviewed.

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "expander/staged_tls_files.h"
#include "server/tls_context.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace topofit::expander {

// CA (>= 1.27.1) accepts replies up to 128 MiB and sends requests as large; a larger request is refused by
// gRPC itself with RESOURCE_EXHAUSTED before any of it is parsed.
inline constexpr int kMaxReceiveBytes = 128 << 20;

struct GrpcServerOptions {
  std::string address = "127.0.0.1";
  int port = 8444;  // 0 picks a free port (tests); port() tells which
  // PEM files. Certificate and key: TLS. A client CA as well: mTLS, every client must present a
  // certificate that chains to it (CA itself sends none, so only for other clients or a proxy).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  bool insecure = false;  // plaintext; must be asked for, and excludes the TLS files
  // How often the TLS files are looked at for a change (a renewed certificate), and how often gRPC looks at
  // the copy it serves from (StagedTlsFiles; whole seconds, at least 1). A changed pair is checked as the
  // HTTPS servers check theirs (server::ReloadingTlsContext) and, when good, copied for gRPC, which serves it
  // to new connections within one more interval; a pair that is not good is not copied, and gRPC keeps
  // serving the previous one.
  absl::Duration tls_reload_interval = absl::Seconds(10);
  // Told of each change of the TLS files: OK when the new pair is copied for gRPC, else why not (the
  // previous pair stays). Optional.
  server::ReloadingTlsContext::OnReload on_tls_reload;
  int max_receive_bytes = kMaxReceiveBytes;
};

class GrpcServer {
 public:
  // Checks the options, reads and checks the PEM files (a certificate that does not parse, a key that does
  // not match it: an error naming the file, never an abort inside gRPC), copies them for gRPC, binds and
  // starts serving `service`, which must outlive the server.
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(const GrpcServerOptions& options, ::grpc::Service& service);
  ~GrpcServer();  // Shutdown(absl::ZeroDuration())
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  int port() const { return port_; }
  bool is_tls() const { return staged_ != nullptr; }

  // Stops accepting calls, lets calls in flight finish for up to `grace`, then cancels the rest and waits
  // for the handlers to return. Idempotent.
  void Shutdown(absl::Duration grace);

 private:
  GrpcServer(std::unique_ptr<::grpc::Server> server, int port, std::unique_ptr<StagedTlsFiles> staged);
  // Looks at the TLS files every `every` until Shutdown, reporting changes through `watch`'s OnReload.
  void WatchTlsFiles(std::unique_ptr<server::ReloadingTlsContext> watch, absl::Duration every);

  std::unique_ptr<StagedTlsFiles> staged_;  // null for plaintext; gRPC reads it until server_ is gone
  std::unique_ptr<::grpc::Server> server_;
  int port_;
  bool stopped_ = false;
  std::unique_ptr<server::ReloadingTlsContext> tls_watch_;
  absl::Notification stop_watching_;
  std::thread tls_watcher_;
};

}  // namespace topofit::expander
