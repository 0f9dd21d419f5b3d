#include "expander/grpc_server.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <utility>

#include <grpc/grpc.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "absl/strings/str_cat.h"
#include "topology/quoted.h"

namespace topofit::expander {
namespace {

// gRPC's file watcher counts in whole seconds, at least 1; the reporting watch looks as often.
int64_t WatchSeconds(const GrpcServerOptions& options) {
  return std::max<int64_t>(1, absl::ToInt64Seconds(options.tls_reload_interval));
}

// Plaintext, or the TLS flags that make a server. The files themselves are read and checked once, by
// ReloadingTlsContext::Create (the HTTPS servers' check), before anything listens.
absl::Status CheckTransport(const GrpcServerOptions& options) {
  const bool any_tls_file =
      !options.tls_cert_file.empty() || !options.tls_key_file.empty() || !options.tls_client_ca_file.empty();
  if (options.insecure) {
    if (any_tls_file) return absl::InvalidArgumentError("--insecure (plaintext gRPC) excludes the --tls-* files");
    return absl::OkStatus();
  }
  if (options.tls_cert_file.empty() || options.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        "the expander needs --tls-cert and --tls-key (cluster-autoscaler only speaks TLS to it), or --insecure");
  }
  // gRPC's default TLS 1.2 suites are ECDHE with AES-GCM (forward-secret AEAD); this variable, read once
  // per process, is the only thing that changes them.
  if (const char* suites = std::getenv("GRPC_SSL_CIPHER_SUITES"); suites != nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("GRPC_SSL_CIPHER_SUITES is set (", topology::Quoted(suites),
                                                   "): the expander offers only forward-secret AEAD suites; unset it"));
  }
  return absl::OkStatus();
}

// gRPC watches the staged copy, never the Secret's files: it loads a renewed pair for new connections
// (no restart), and only a pair that topofit found good ever reaches it.
std::shared_ptr<::grpc::ServerCredentials> TlsCredentials(const StagedTlsFiles& staged, bool client_ca,
                                                          int64_t watch_seconds) {
  auto provider = std::make_shared<::grpc::experimental::FileWatcherCertificateProvider>(
      staged.key(), staged.cert(), client_ca ? staged.client_ca() : std::string(),
      static_cast<unsigned int>(watch_seconds));
  ::grpc::experimental::TlsServerCredentialsOptions tls(provider);
  tls.watch_identity_key_cert_pairs();
  if (client_ca) {
    tls.watch_root_certs();
    tls.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    tls.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  return ::grpc::experimental::TlsServerCredentials(tls);
}

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(const GrpcServerOptions& options,
                                                              ::grpc::Service& service) {
  if (options.port < 0 || options.port > 65535) return absl::InvalidArgumentError("--grpc-port out of range");
  if (options.max_receive_bytes <= 0) return absl::InvalidArgumentError("max receive size must be positive");
  if (absl::Status checked = CheckTransport(options); !checked.ok()) return checked;

  std::unique_ptr<StagedTlsFiles> staged;
  std::unique_ptr<server::ReloadingTlsContext> watch;
  std::shared_ptr<::grpc::ServerCredentials> credentials = ::grpc::InsecureServerCredentials();
  const absl::Duration every = absl::Seconds(WatchSeconds(options));
  if (!options.insecure) {
    absl::StatusOr<std::unique_ptr<StagedTlsFiles>> made = StagedTlsFiles::Create();
    if (!made.ok()) return made.status();
    staged = *std::move(made);
    // Looks at the Secret's files as the HTTPS servers do; the pair it finds good (now, and on every change)
    // is what it stages for gRPC; one that is not keeps the staged pair and is reported failed.
    absl::StatusOr<std::unique_ptr<server::ReloadingTlsContext>> watched = server::ReloadingTlsContext::Create(
        {options.tls_cert_file, options.tls_key_file, options.tls_client_ca_file}, every, options.on_tls_reload,
        [to = staged.get()](const server::TlsPem& pem) { return to->Publish(pem); });
    if (!watched.ok()) return watched.status();  // names the file and what is wrong with it
    watch = *std::move(watched);
    credentials = TlsCredentials(*staged, !options.tls_client_ca_file.empty(), WatchSeconds(options));
  }

  const std::string address = absl::StrCat(options.address, ":", options.port);
  int bound = 0;
  ::grpc::ServerBuilder builder;
  builder.AddListeningPort(address, credentials, &bound);
  // gRPC sets SO_REUSEPORT on Linux by default: a second expander started on a port another process holds
  // would listen too, and the kernel would split CA's calls between them. Refused instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options.max_receive_bytes);
  builder.RegisterService(&service);
  std::unique_ptr<::grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound == 0) {
    if (server != nullptr) server->Shutdown();
    return absl::UnavailableError(absl::StrCat("gRPC server could not listen on ", address, " (port in use?)"));
  }
  std::unique_ptr<GrpcServer> self(new GrpcServer(std::move(server), bound, std::move(staged)));
  if (watch != nullptr) self->WatchTlsFiles(std::move(watch), every);
  return self;
}

void GrpcServer::WatchTlsFiles(std::unique_ptr<server::ReloadingTlsContext> watch, absl::Duration every) {
  tls_watch_ = std::move(watch);
  tls_watcher_ = std::thread([this, every] {
    while (!stop_watching_.WaitForNotificationWithTimeout(every)) tls_watch_->Current();
  });
}

GrpcServer::GrpcServer(std::unique_ptr<::grpc::Server> server, int port, std::unique_ptr<StagedTlsFiles> staged)
    : staged_(std::move(staged)), server_(std::move(server)), port_(port) {}

GrpcServer::~GrpcServer() { Shutdown(absl::ZeroDuration()); }

void GrpcServer::Shutdown(absl::Duration grace) {
  if (stopped_) return;
  stopped_ = true;
  if (tls_watcher_.joinable()) {
    stop_watching_.Notify();
    tls_watcher_.join();
  }
  server_->Shutdown(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(grace));
  server_->Wait();
}

}  // namespace topofit::expander
