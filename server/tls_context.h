#pragma once

// The TLS policy of every topofit HTTPS server, in one place: TLS 1.2 and 1.3 only; on TLS 1.2 only
// forward-secret AEAD suites (ECDHE key exchange with AES-GCM or ChaCha20-Poly1305), so a stolen key
// cannot decrypt recorded traffic and no CBC/SHA-1 construction is offered; TLS 1.3 with OpenSSL's default
// suites (all of them forward-secret AEAD). Optionally client certificates signed by a given CA (mTLS).

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/ssl/context.hpp>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/metrics.h"

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

// A server's TLS context that follows its files: cert-manager renews a certificate by rewriting its Secret,
// and the kubelet swaps the mounted files (a symlink to a new folder), so a server that read them once would
// serve the old certificate until restarted, and then past its expiry. Current() looks at the files (device,
// inode, size and modification time, through symlinks) at most every `check_every`; when one changed it
// builds a new context for the connections accepted from then on (those open keep theirs). A rebuild that
// fails, e.g. a key and a certificate caught mid-update that do not match, keeps the old context and is
// tried again when the files change again. Thread-safe.
class ReloadingTlsContext {
 public:
  struct Files {
    std::string cert;
    std::string key;
    std::string client_ca;  // optional
  };
  // Called after each rebuild: OK with the new context in place, or why the old one stays.
  using OnReload = std::function<void(const absl::Status&)>;

  // Fails like MakeServerTlsContext when the files do not make a context now.
  static absl::StatusOr<std::unique_ptr<ReloadingTlsContext>> Create(Files files, absl::Duration check_every,
                                                                     OnReload on_reload = {});

  // The context for a new connection; keep the pointer for the connection's life.
  std::shared_ptr<boost::asio::ssl::context> Current();

 private:
  struct FileIdentity {
    bool operator==(const FileIdentity&) const = default;
    unsigned long long device = 0, inode = 0, size = 0;
    long long mtime_ns = 0;
    bool exists = false;
  };
  using Identities = std::vector<FileIdentity>;

  ReloadingTlsContext(Files files, absl::Duration check_every, OnReload on_reload);
  Identities Look() const;

  const Files files_;
  const std::chrono::steady_clock::duration check_every_;
  const OnReload on_reload_;
  std::mutex mu_;
  std::shared_ptr<boost::asio::ssl::context> current_;  // guarded by mu_
  Identities identities_;                                // guarded by mu_: of the files `current_` came from
  Identities failed_;                                    // guarded by mu_: of the last files that did not load
  std::chrono::steady_clock::time_point next_look_;      // guarded by mu_
};

// topofit_tls_reloads_total{server,result}: declared here once for every TLS server of the process (the
// HTTPS servers and the expander's gRPC server).
Counter& TlsReloadsCounter(MetricsRegistry& registry);

// What a TLS server does after looking at changed files: counts the reload as ok or failed under `server`,
// and logs tls_reloaded, or tls_reload_failed with the reason (the previous files stay in use).
ReloadingTlsContext::OnReload ReportTlsReloads(Counter& reloads, std::string server);

}  // namespace topofit::server
