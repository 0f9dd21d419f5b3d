#pragma once

// A folder laid out as the kubelet mounts a Secret, and updated as the kubelet updates it when cert-manager
// renews the certificate: tls.crt and tls.key are symlinks into `..data`, itself a symlink to a folder of
// the current version; an update writes a new version folder and swaps `..data` in one rename, so a reader
// sees the old pair or the new pair, never a mix.

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

namespace topofit::testing {

class MountedSecret {
 public:
  // `dir` is created; it is removed with the object.
  explicit MountedSecret(std::string dir) : dir_(std::move(dir)) {
    std::filesystem::create_directories(dir_);
  }
  ~MountedSecret() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  MountedSecret(const MountedSecret&) = delete;
  MountedSecret& operator=(const MountedSecret&) = delete;

  std::string cert() const { return dir_ + "/tls.crt"; }
  std::string key() const { return dir_ + "/tls.key"; }

  // Publishes a copy of `cert_file` and `key_file` as the Secret's new version.
  void Update(const std::string& cert_file, const std::string& key_file) {
    namespace fs = std::filesystem;
    const std::string version = absl::StrCat("..v", ++versions_);
    fs::create_directory(fs::path(dir_) / version);
    fs::copy_file(cert_file, fs::path(dir_) / version / "tls.crt");
    fs::copy_file(key_file, fs::path(dir_) / version / "tls.key");
    const fs::path staged = fs::path(dir_) / "..data_tmp";
    fs::create_directory_symlink(version, staged);
    fs::rename(staged, fs::path(dir_) / "..data");  // atomic: rename(2) over the old symlink
    if (versions_ == 1) {
      fs::create_symlink("..data/tls.crt", cert());
      fs::create_symlink("..data/tls.key", key());
    }
  }

 private:
  const std::string dir_;
  int versions_ = 0;
};

}  // namespace topofit::testing
