#pragma once

// Throwaway PKI for TLS tests: a CA, a server certificate for 127.0.0.1 / localhost and a client
// certificate, all signed by the CA, written as PEM files into a fresh temporary directory that is removed
// with the object. Made with the OpenSSL API in-process (EC P-256, fast), so tests need no openssl binary
// and no checked-in keys. Shared by the HTTP server tests and the gRPC expander tests.

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace topofit::testing {

class TestCerts {
 public:
  // `server_serial`: the server certificate's serial number (a renewed certificate has another).
  static absl::StatusOr<std::unique_ptr<TestCerts>> Create(long server_serial = 2);
  ~TestCerts();  // deletes the directory
  TestCerts(const TestCerts&) = delete;
  TestCerts& operator=(const TestCerts&) = delete;

  const std::string& dir() const { return dir_; }
  std::string ca_cert_file() const { return dir_ + "/ca.pem"; }
  std::string server_cert_file() const { return dir_ + "/server.pem"; }  // SAN: IP 127.0.0.1, DNS localhost
  std::string server_key_file() const { return dir_ + "/server-key.pem"; }
  std::string client_cert_file() const { return dir_ + "/client.pem"; }  // CN topofit-test-client
  std::string client_key_file() const { return dir_ + "/client-key.pem"; }
  // A certificate and key from another CA, which the server must reject as a client.
  std::string stranger_cert_file() const { return dir_ + "/stranger.pem"; }
  std::string stranger_key_file() const { return dir_ + "/stranger-key.pem"; }

 private:
  explicit TestCerts(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

// Whether a TLS handshake with the server on 127.0.0.1:`port` succeeds for a client that trusts `certs`'
// CA and offers only protocol versions `min_version`..`max_version` (TLS1_2_VERSION...) and, for TLS 1.2,
// only `ciphers` (OpenSSL names; null: OpenSSL's defaults). The server's TLS policy, probed from outside.
bool TlsHandshakes(int port, const TestCerts& certs, int min_version, int max_version, const char* ciphers);

// The serial number of the certificate the TLS server on 127.0.0.1:`port` presents to a new connection
// (not verified), or -1 when no handshake completes. With `client` set, the handshake offers its client
// certificate.
long ServedCertificateSerial(int port, const TestCerts* client = nullptr);

}  // namespace topofit::testing
