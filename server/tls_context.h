#pragma once

// The TLS policy of every topofit HTTPS server, in one place: TLS 1.2 and 1.3 only; on TLS 1.2 only
// forward-secret AEAD suites (ECDHE key exchange with AES-GCM or ChaCha20-Poly1305), so a stolen key
// cannot decrypt recorded traffic and no CBC/SHA-1 construction is offered; TLS 1.3 with OpenSSL's default
// suites (all of them forward-secret AEAD). Optionally client certificates signed by a given CA (mTLS).

#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "absl/status/statusor.h"

namespace topofit::server {

// The TLS 1.2 suites offered, in the server's order of preference (Mozilla's "intermediate" list).
inline constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// Fails (never aborts) on an unreadable or invalid certificate, key or CA file, or a key that does not
// belong to the certificate.
absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeServerTlsContext(const std::string& cert_file,
                                                                               const std::string& key_file,
                                                                               const std::string& client_ca_file);

}  // namespace topofit::server
