#include "server/tls_context.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "absl/strings/str_cat.h"

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

// The CA file must hold at least one certificate: an empty or garbage file would otherwise refuse every
// client without saying why.
absl::Status LoadClientCa(SSL_CTX* ctx, const std::string& path) {
  BIO* bio = BIO_new_file(path.c_str(), "r");
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

}  // namespace

absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeServerTlsContext(const std::string& cert_file,
                                                                               const std::string& key_file,
                                                                               const std::string& client_ca_file) {
  namespace ssl = boost::asio::ssl;
  ERR_clear_error();
  auto context = std::make_unique<ssl::context>(ssl::context::tls_server);
  SSL_CTX* ctx = context->native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1) {
    return absl::InternalError(absl::StrCat("TLS cipher list: ", OpenSslError()));
  }
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) return Failed("TLS certificate", cert_file);
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) return Failed("TLS key", key_file);
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("TLS key ", key_file, " does not belong to certificate ", cert_file, ": ", OpenSslError()));
  }
  if (!client_ca_file.empty()) {
    if (absl::Status s = LoadClientCa(ctx, client_ca_file); !s.ok()) return s;
  }
  return context;
}

}  // namespace topofit::server
