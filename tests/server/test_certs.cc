#include "tests/server/test_certs.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace topofit::testing {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

absl::Status OpenSslError(const char* what) {
  char buf[256] = "unknown";
  if (unsigned long e = ERR_get_error()) ERR_error_string_n(e, buf, sizeof(buf));
  return absl::InternalError(absl::StrCat(what, ": ", buf));
}

absl::StatusOr<Key> NewKey() {
  Key key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslError("EVP_EC_gen");
  return key;
}

bool AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

struct CertSpec {
  std::string common_name;
  bool is_ca = false;
  std::string subject_alt_names;  // e.g. "IP:127.0.0.1,DNS:localhost"
  std::string extended_key_usage;  // "serverAuth" / "clientAuth"
};

// Signs `spec` for `key` with `issuer_key`; a null issuer makes it self-signed.
absl::StatusOr<Cert> NewCert(const CertSpec& spec, EVP_PKEY* key, X509* issuer, EVP_PKEY* issuer_key, long serial) {
  Cert cert(X509_new());
  if (!cert) return OpenSslError("X509_new");
  X509_set_version(cert.get(), 2);  // v3
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);  // tolerate clock skew between test hosts
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(spec.common_name.c_str()),
                             -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));

  bool ok = true;
  if (spec.is_ca) {
    ok = ok && AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    ok = ok && AddExtension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign");
  } else {
    ok = ok && AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    ok = ok && AddExtension(cert.get(), signer, NID_key_usage, "critical,digitalSignature");
    ok = ok && AddExtension(cert.get(), signer, NID_ext_key_usage, spec.extended_key_usage.c_str());
  }
  if (!spec.subject_alt_names.empty()) {
    ok = ok && AddExtension(cert.get(), signer, NID_subject_alt_name, spec.subject_alt_names.c_str());
  }
  ok = ok && AddExtension(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (!ok) return OpenSslError("X509 extension");
  if (X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) == 0) {
    return OpenSslError("X509_sign");
  }
  return cert;
}

absl::Status WritePem(const std::string& path, X509* cert, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return absl::InternalError(absl::StrCat("cannot write ", path));
  const bool ok = cert != nullptr ? PEM_write_X509(f, cert) == 1
                                  : PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  std::fclose(f);
  if (!ok) return OpenSslError("PEM_write");
  return absl::OkStatus();
}

struct Issued {
  Key key;
  Cert cert;
};

absl::StatusOr<Issued> Issue(const CertSpec& spec, X509* issuer, EVP_PKEY* issuer_key, long serial) {
  absl::StatusOr<Key> key = NewKey();
  if (!key.ok()) return key.status();
  absl::StatusOr<Cert> cert = NewCert(spec, key->get(), issuer, issuer_key, serial);
  if (!cert.ok()) return cert.status();
  return Issued{std::move(*key), std::move(*cert)};
}

}  // namespace

absl::StatusOr<std::unique_ptr<TestCerts>> TestCerts::Create(long server_serial) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "topofit-certs-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) return absl::InternalError("mkdtemp failed");
  std::unique_ptr<TestCerts> certs(new TestCerts(buf.data()));

  auto ca = Issue({"topofit test CA", true, "", ""}, nullptr, nullptr, 1);
  if (!ca.ok()) return ca.status();
  auto server = Issue({"localhost", false, "IP:127.0.0.1,DNS:localhost", "serverAuth"}, ca->cert.get(),
                      ca->key.get(), server_serial);
  if (!server.ok()) return server.status();
  auto client = Issue({"topofit-test-client", false, "", "clientAuth"}, ca->cert.get(), ca->key.get(), 3);
  if (!client.ok()) return client.status();
  auto other_ca = Issue({"some other CA", true, "", ""}, nullptr, nullptr, 4);
  if (!other_ca.ok()) return other_ca.status();
  auto stranger = Issue({"stranger", false, "", "clientAuth"}, other_ca->cert.get(), other_ca->key.get(), 5);
  if (!stranger.ok()) return stranger.status();

  for (const absl::Status& s : {
           WritePem(certs->ca_cert_file(), ca->cert.get(), nullptr),
           WritePem(certs->server_cert_file(), server->cert.get(), nullptr),
           WritePem(certs->server_key_file(), nullptr, server->key.get()),
           WritePem(certs->client_cert_file(), client->cert.get(), nullptr),
           WritePem(certs->client_key_file(), nullptr, client->key.get()),
           WritePem(certs->stranger_cert_file(), stranger->cert.get(), nullptr),
           WritePem(certs->stranger_key_file(), nullptr, stranger->key.get()),
       }) {
    if (!s.ok()) return s;
  }
  return certs;
}

TestCerts::~TestCerts() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

bool TlsHandshakes(int port, const TestCerts& certs, int min_version, int max_version, const char* ciphers) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_min_proto_version(ctx, min_version);
    SSL_CTX_set_max_proto_version(ctx, max_version);
    SSL_CTX_set_security_level(ctx, 0);  // let the client offer the weak suites the server must refuse
    if (ciphers != nullptr) SSL_CTX_set_cipher_list(ctx, ciphers);
    SSL_CTX_load_verify_locations(ctx, certs.ca_cert_file().c_str(), nullptr);
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    ok = SSL_connect(ssl) == 1;
    SSL_free(ssl);
    SSL_CTX_free(ctx);
  }
  ::close(fd);
  ERR_clear_error();
  return ok;
}

long ServedCertificateSerial(int port, const TestCerts* client) {
  // A server that refuses the handshake may hang up while the ClientHello is being written: SIGPIPE would
  // kill the test. Ignored, as every topofit server process ignores it (server/http_server.cc).
  ::signal(SIGPIPE, SIG_IGN);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  long serial = -1;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    if (client != nullptr) {
      SSL_CTX_use_certificate_chain_file(ctx, client->client_cert_file().c_str());
      SSL_CTX_use_PrivateKey_file(ctx, client->client_key_file().c_str(), SSL_FILETYPE_PEM);
    }
    // gRPC servers insist on ALPN h2.
    static const unsigned char kAlpn[] = {2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    SSL_CTX_set_alpn_protos(ctx, kAlpn, sizeof(kAlpn));
    SSL* ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    SSL_set_tlsext_host_name(ssl, "localhost");
    if (SSL_connect(ssl) == 1) {
      if (X509* peer = SSL_get1_peer_certificate(ssl)) {
        serial = ASN1_INTEGER_get(X509_get_serialNumber(peer));
        X509_free(peer);
      }
    }
    SSL_free(ssl);
    SSL_CTX_free(ctx);
  }
  ::close(fd);
  ERR_clear_error();
  return serial;
}

}  // namespace topofit::testing
