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

// A server's TLS files: PEM certificate (chain), private key, optional client CA.
struct TlsFiles {
  std::string cert;
  std::string key;
  std::string client_ca;  // optional
};

// What the files held when read, each once: what is checked is what gets used, even when the files are
// swapped between two reads.
struct TlsPem {
  std::string cert;
  std::string key;
  std::string client_ca;  // empty when there is no client CA file
};

// Fails on a file that cannot be read.
absl::StatusOr<TlsPem> ReadTlsFiles(const TlsFiles& files);

// What decides that a pair is good, for every TLS server. Fails (never aborts) on an invalid certificate,
// key or CA, or a key that does not belong to the certificate; `files` name them in the error.
absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeServerTlsContext(const TlsFiles& files,
                                                                               const TlsPem& pem);

// A server's TLS context that follows its files: cert-manager renews a certificate by rewriting its Secret,
// and the kubelet swaps the mounted files (a symlink to a new folder), so a server that read them once would
// serve the old certificate until restarted, and then past its expiry. Current() looks at the files (device,
// inode, size and modification time, through symlinks) at most every `check_every`; when one changed it
// builds a new context for the connections accepted from then on (those open keep theirs). A rebuild that
// fails, e.g. a key and a certificate caught mid-update that do not match, keeps the old context and is
// tried again when the files change again. Thread-safe.
class ReloadingTlsContext {
 public:
  using Files = TlsFiles;
  // Called after each rebuild: OK with the new context in place, or why the old one stays.
  using OnReload = std::function<void(const absl::Status&)>;
  // Given the files' contents once they made a context, before it is put in place (at Create too): another
  // user of the same files (the expander's gRPC server) takes exactly the pair found good. An error keeps
  // the previous context, and is what OnReload is told.
  using OnLoaded = std::function<absl::Status(const TlsPem&)>;

  // Fails like ReadTlsFiles, MakeServerTlsContext or `on_loaded` when the files do not make a context now.
  static absl::StatusOr<std::unique_ptr<ReloadingTlsContext>> Create(Files files, absl::Duration check_every,
                                                                     OnReload on_reload = {},
                                                                     OnLoaded on_loaded = {});

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

  ReloadingTlsContext(Files files, absl::Duration check_every, OnReload on_reload, OnLoaded on_loaded);
  Identities Look() const;
  // Reads the files, makes a context and hands their contents to on_loaded_.
  absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> Load() const;

  const Files files_;
  const std::chrono::steady_clock::duration check_every_;
  const OnReload on_reload_;
  const OnLoaded on_loaded_;
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
