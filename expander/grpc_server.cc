#include "expander/grpc_server.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "absl/strings/str_cat.h"
#include "topology/quoted.h"

namespace topofit::expander {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& what, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(what, " ", path, ": cannot be read"));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat(what, " ", path, ": read error"));
  return text.str();
}

// gRPC only finds out that a PEM file is bad when it binds, and then reports nothing more useful than a
// failed start; OpenSSL says which file is wrong, before anything listens.
struct Bio {
  explicit Bio(const std::string& pem) : bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))) {}
  ~Bio() { BIO_free(bio); }
  BIO* bio;
};

absl::Status CheckPemFiles(const GrpcServerOptions& options, const std::string& cert_pem, const std::string& key_pem,
                           const std::string& ca_pem) {
  Bio cert_bio(cert_pem);
  X509* cert = PEM_read_bio_X509(cert_bio.bio, nullptr, nullptr, nullptr);
  if (cert == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--tls-cert ", options.tls_cert_file, ": no PEM certificate"));
  }
  Bio key_bio(key_pem);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(key_bio.bio, nullptr, nullptr, nullptr);
  const bool matches = key != nullptr && X509_check_private_key(cert, key) == 1;
  EVP_PKEY_free(key);
  X509_free(cert);
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--tls-key ", options.tls_key_file, ": no PEM private key"));
  }
  if (!matches) {
    return absl::InvalidArgumentError(absl::StrCat("--tls-key ", options.tls_key_file, " does not match --tls-cert ",
                                                   options.tls_cert_file));
  }
  if (options.tls_client_ca_file.empty()) return absl::OkStatus();
  Bio ca_bio(ca_pem);
  X509* ca = PEM_read_bio_X509(ca_bio.bio, nullptr, nullptr, nullptr);
  if (ca == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-client-ca ", options.tls_client_ca_file, ": no PEM certificate"));
  }
  X509_free(ca);
  return absl::OkStatus();
}

// gRPC's file watcher counts in whole seconds, at least 1; the reporting watch looks as often.
int64_t WatchSeconds(const GrpcServerOptions& options) {
  return std::max<int64_t>(1, absl::ToInt64Seconds(options.tls_reload_interval));
}

absl::StatusOr<std::shared_ptr<::grpc::ServerCredentials>> Credentials(const GrpcServerOptions& options) {
  const bool any_tls_file =
      !options.tls_cert_file.empty() || !options.tls_key_file.empty() || !options.tls_client_ca_file.empty();
  if (options.insecure) {
    if (any_tls_file) return absl::InvalidArgumentError("--insecure (plaintext gRPC) excludes the --tls-* files");
    return ::grpc::InsecureServerCredentials();
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
  absl::StatusOr<std::string> cert = ReadPem("--tls-cert", options.tls_cert_file);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem("--tls-key", options.tls_key_file);
  if (!key.ok()) return key.status();
  std::string ca;
  if (!options.tls_client_ca_file.empty()) {
    absl::StatusOr<std::string> read = ReadPem("--tls-client-ca", options.tls_client_ca_file);
    if (!read.ok()) return read.status();
    ca = *std::move(read);
  }
  if (absl::Status checked = CheckPemFiles(options, *cert, *key, ca); !checked.ok()) return checked;

  // The files checked above are also watched: cert-manager renews the certificate by rewriting the Secret,
  // and gRPC loads the new pair for new connections, so a renewal needs no restart.
  auto provider = std::make_shared<::grpc::experimental::FileWatcherCertificateProvider>(
      options.tls_key_file, options.tls_cert_file, options.tls_client_ca_file,
      static_cast<unsigned int>(WatchSeconds(options)));
  ::grpc::experimental::TlsServerCredentialsOptions tls(provider);
  tls.watch_identity_key_cert_pairs();
  if (!ca.empty()) {
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
  absl::StatusOr<std::shared_ptr<::grpc::ServerCredentials>> credentials = Credentials(options);
  if (!credentials.ok()) return credentials.status();

  const std::string address = absl::StrCat(options.address, ":", options.port);
  int bound = 0;
  ::grpc::ServerBuilder builder;
  builder.AddListeningPort(address, *credentials, &bound);
  builder.SetMaxReceiveMessageSize(options.max_receive_bytes);
  builder.RegisterService(&service);
  std::unique_ptr<::grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || bound == 0) {
    if (server != nullptr) server->Shutdown();
    return absl::UnavailableError(absl::StrCat("gRPC server could not listen on ", address, " (port in use?)"));
  }
  std::unique_ptr<GrpcServer> self(new GrpcServer(std::move(server), bound, !options.insecure));
  if (!options.insecure && options.on_tls_reload) {
    const absl::Duration every = absl::Seconds(WatchSeconds(options));
    absl::StatusOr<std::unique_ptr<server::ReloadingTlsContext>> watch = server::ReloadingTlsContext::Create(
        {options.tls_cert_file, options.tls_key_file, options.tls_client_ca_file}, every, options.on_tls_reload);
    if (!watch.ok()) return watch.status();  // not after CheckPemFiles, unless the files changed since
    self->WatchTlsFiles(*std::move(watch), every);
  }
  return self;
}

void GrpcServer::WatchTlsFiles(std::unique_ptr<server::ReloadingTlsContext> watch, absl::Duration every) {
  tls_watch_ = std::move(watch);
  tls_watcher_ = std::thread([this, every] {
    while (!stop_watching_.WaitForNotificationWithTimeout(every)) tls_watch_->Current();
  });
}

GrpcServer::GrpcServer(std::unique_ptr<::grpc::Server> server, int port, bool tls)
    : server_(std::move(server)), port_(port), tls_(tls) {}

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
