#include "server/tls_context.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <tuple>
#include <utility>

#include <spdlog/spdlog.h>

#include "absl/strings/str_cat.h"
#include "server/logging.h"

namespace topofit::server {
namespace {

std::string OpenSslError() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

absl::Status Failed(const char* what, const std::string& path) {
  return absl::InvalidArgumentError(absl::StrCat(what, " ", path, ": ", OpenSslError()));
}

// The CA must hold at least one certificate: an empty or garbage file would otherwise refuse every client
// without saying why.
absl::Status LoadClientCa(SSL_CTX* ctx, const std::string& path, const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return Failed("TLS client CA", path);
  X509_STORE* store = SSL_CTX_get_cert_store(ctx);
  STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
  int count = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store, cert);
    if (X509_NAME* name = X509_NAME_dup(X509_get_subject_name(cert))) sk_X509_NAME_push(names, name);
    X509_free(cert);
    ++count;
  }
  BIO_free(bio);
  ERR_clear_error();  // the read that ended the loop leaves "no start line"
  if (count == 0) {
    sk_X509_NAME_pop_free(names, X509_NAME_free);
    return absl::InvalidArgumentError(absl::StrCat("TLS client CA ", path, ": no PEM certificate"));
  }
  SSL_CTX_set_client_CA_list(ctx, names);  // takes `names`
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const char* what, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(what, " ", path, ": cannot be read"));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::InvalidArgumentError(absl::StrCat(what, " ", path, ": read error"));
  return text.str();
}

}  // namespace

absl::StatusOr<TlsPem> ReadTlsFiles(const TlsFiles& files) {
  TlsPem pem;
  for (auto [what, path, text] : {std::tuple("TLS certificate", &files.cert, &pem.cert),
                                  std::tuple("TLS key", &files.key, &pem.key),
                                  std::tuple("TLS client CA", &files.client_ca, &pem.client_ca)}) {
    if (path->empty()) continue;
    absl::StatusOr<std::string> read = ReadFile(what, *path);
    if (!read.ok()) return read.status();
    *text = *std::move(read);
  }
  return pem;
}

absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeServerTlsContext(const TlsFiles& files,
                                                                               const TlsPem& pem) {
  namespace ssl = boost::asio::ssl;
  ERR_clear_error();
  auto context = std::make_unique<ssl::context>(ssl::context::tls_server);
  SSL_CTX* ctx = context->native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1) {
    return absl::InternalError(absl::StrCat("TLS cipher list: ", OpenSslError()));
  }
  boost::system::error_code error;
  context->use_certificate_chain(boost::asio::buffer(pem.cert), error);
  if (error) return absl::InvalidArgumentError(absl::StrCat("TLS certificate ", files.cert, ": ", error.message()));
  // Parsed apart from its use so that a file holding no key and a key of another certificate (caught
  // mid-renewal, or a mistake) are told apart: OpenSSL's own words are "unsupported" and "key values
  // mismatch".
  BIO* key_bio = BIO_new_mem_buf(pem.key.data(), static_cast<int>(pem.key.size()));
  EVP_PKEY* key = key_bio == nullptr ? nullptr : PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
  BIO_free(key_bio);
  if (key == nullptr) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat("TLS key ", files.key, ": no PEM private key"));
  }
  const bool used = SSL_CTX_use_PrivateKey(ctx, key) == 1;  // checks it against the certificate
  EVP_PKEY_free(key);
  if (!used) {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS key ", files.key, " does not belong to certificate ", files.cert, ": ", OpenSslError()));
  }
  if (!files.client_ca.empty()) {
    if (absl::Status s = LoadClientCa(ctx, files.client_ca, pem.client_ca); !s.ok()) return s;
  }
  return context;
}

absl::StatusOr<std::unique_ptr<ReloadingTlsContext>> ReloadingTlsContext::Create(Files files,
                                                                                  absl::Duration check_every,
                                                                                  OnReload on_reload,
                                                                                  OnLoaded on_loaded) {
  std::unique_ptr<ReloadingTlsContext> self(
      new ReloadingTlsContext(std::move(files), check_every, std::move(on_reload), std::move(on_loaded)));
  self->identities_ = self->Look();
  absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> first = self->Load();
  if (!first.ok()) return first.status();
  self->current_ = *std::move(first);
  return self;
}

ReloadingTlsContext::ReloadingTlsContext(Files files, absl::Duration check_every, OnReload on_reload,
                                         OnLoaded on_loaded)
    : files_(std::move(files)),
      check_every_(std::chrono::duration_cast<std::chrono::steady_clock::duration>(absl::ToChronoNanoseconds(check_every))),
      on_reload_(std::move(on_reload)),
      on_loaded_(std::move(on_loaded)),
      next_look_(std::chrono::steady_clock::now() + check_every_) {}

absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> ReloadingTlsContext::Load() const {
  absl::StatusOr<TlsPem> pem = ReadTlsFiles(files_);
  if (!pem.ok()) return pem.status();
  absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> context = MakeServerTlsContext(files_, *pem);
  if (!context.ok() || !on_loaded_) return context;
  if (absl::Status taken = on_loaded_(*pem); !taken.ok()) return taken;
  return context;
}

ReloadingTlsContext::Identities ReloadingTlsContext::Look() const {
  Identities out;
  for (const std::string* path : {&files_.cert, &files_.key, &files_.client_ca}) {
    FileIdentity id;
    struct stat st {};
    if (!path->empty() && ::stat(path->c_str(), &st) == 0) {  // stat follows the kubelet's symlinks
      id = FileIdentity{static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino),
                        static_cast<unsigned long long>(st.st_size),
                        static_cast<long long>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec, true};
    }
    out.push_back(id);
  }
  return out;
}

std::shared_ptr<boost::asio::ssl::context> ReloadingTlsContext::Current() {
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now < next_look_) return current_;
  next_look_ = now + check_every_;
  Identities seen = Look();
  if (seen == identities_ || seen == failed_) return current_;
  absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> rebuilt = Load();
  if (rebuilt.ok()) {
    current_ = *std::move(rebuilt);
    identities_ = std::move(seen);
  } else {
    failed_ = std::move(seen);
  }
  if (on_reload_) on_reload_(rebuilt.status());
  return current_;
}

Counter& TlsReloadsCounter(MetricsRegistry& registry) {
  return registry.AddCounter("topofit_tls_reloads_total",
                             "TLS certificate, key or client CA files found changed and loaded (ok) or not (failed: "
                             "the previous ones stay in use).",
                             {"server", "result"});
}

ReloadingTlsContext::OnReload ReportTlsReloads(Counter& reloads, std::string server) {
  return [&reloads, server = std::move(server)](const absl::Status& reloaded) {
    reloads.Inc({server, reloaded.ok() ? "ok" : "failed"});
    LogFields fields = {{"server", server}};
    if (!reloaded.ok()) fields.emplace_back("error", reloaded.message());
    LogEvent(*spdlog::default_logger(), reloaded.ok() ? "tls_reloaded" : "tls_reload_failed", fields,
             reloaded.ok() ? spdlog::level::info : spdlog::level::warn);
  };
}

}  // namespace topofit::server
