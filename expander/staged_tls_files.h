#pragma once

// A private copy of the expander's TLS files, for gRPC's file watcher to read instead of the mounted Secret.
// gRPC 1.51's grpc::experimental::FileWatcherCertificateProvider serves whatever pair it reads, a key that
// does not match its certificate included, and then every handshake fails; topofit checks a changed pair
// first (server::ReloadingTlsContext) and publishes here only a pair found good, so gRPC keeps serving the
// last good one. Published as the kubelet's atomic writer updates a Secret volume: each version in a fresh
// timestamped folder, `..data` a symlink to it swapped in one rename(2), and stable names (tls.crt,
// tls.key, ca.crt) that are symlinks through `..data`, so a reader opening one file sees one version.
//
// gRPC also checks that the files' modification times (whole seconds) did not change while it read them,
// and reads again if they did: a version published at least a second after the previous one (the watch
// looks once per interval, at least 1 s) has later times, so a swap between its reads of the key and the
// certificate is seen too.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/tls_context.h"

namespace topofit::expander {

class StagedTlsFiles {
 public:
  // A fresh folder, mode 0700 (it holds a private key), under $TMPDIR or /tmp; removed with the object.
  static absl::StatusOr<std::unique_ptr<StagedTlsFiles>> Create();
  ~StagedTlsFiles();
  StagedTlsFiles(const StagedTlsFiles&) = delete;
  StagedTlsFiles& operator=(const StagedTlsFiles&) = delete;

  // Makes `pem` the files' contents in one step, ca.crt only when pem.client_ca is not empty, and removes
  // the previous versions. On an error the previous version stays in place.
  absl::Status Publish(const server::TlsPem& pem);

  const std::string& dir() const { return dir_; }
  std::string cert() const { return dir_ + "/tls.crt"; }
  std::string key() const { return dir_ + "/tls.key"; }
  std::string client_ca() const { return dir_ + "/ca.crt"; }

 private:
  explicit StagedTlsFiles(std::string dir) : dir_(std::move(dir)) {}
  void RemoveVersionsBut(const std::string& current) const;

  const std::string dir_;
};

}  // namespace topofit::expander
