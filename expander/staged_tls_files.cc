#include "expander/staged_tls_files.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace topofit::expander {
namespace {

namespace fs = std::filesystem;

constexpr const char* kData = "..data";
constexpr const char* kDataTmp = "..data_tmp";

absl::Status Errno(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::Status WriteFile(const std::string& path, const std::string& content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Errno(absl::StrCat("create ", path));
  size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status failed = Errno(absl::StrCat("write ", path));
      ::close(fd);
      return failed;
    }
    written += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return Errno(absl::StrCat("close ", path));
  return absl::OkStatus();
}

// A stable name, e.g. tls.crt -> ..data/tls.crt; there from the first version on.
absl::Status LinkThroughData(const std::string& dir, const std::string& name) {
  const std::string link = absl::StrCat(dir, "/", name);
  if (::symlink(absl::StrCat(kData, "/", name).c_str(), link.c_str()) != 0 && errno != EEXIST) {
    return Errno(absl::StrCat("symlink ", link));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<StagedTlsFiles>> StagedTlsFiles::Create() {
  std::error_code error;
  const fs::path tmp = fs::temp_directory_path(error);
  if (error) return absl::InternalError(absl::StrCat("temporary directory: ", error.message()));
  std::string dir = (tmp / "topofit-grpc-tls-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return Errno(absl::StrCat("mkdtemp ", dir));  // mode 0700
  return std::unique_ptr<StagedTlsFiles>(new StagedTlsFiles(std::move(dir)));
}

StagedTlsFiles::~StagedTlsFiles() {
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

absl::Status StagedTlsFiles::Publish(const server::TlsPem& pem) {
  // The time only names the folder for a reader; mkdtemp makes it unique.
  std::string version = absl::StrCat(dir_, "/..", absl::FormatTime("%Y_%m_%d_%H_%M_%E6S", absl::Now(),
                                                                   absl::UTCTimeZone()), ".XXXXXX");
  if (::mkdtemp(version.data()) == nullptr) return Errno(absl::StrCat("mkdtemp ", version));
  std::vector<std::pair<const char*, const std::string*>> files = {{"tls.crt", &pem.cert}, {"tls.key", &pem.key}};
  if (!pem.client_ca.empty()) files.emplace_back("ca.crt", &pem.client_ca);
  absl::Status staged = absl::OkStatus();
  for (const auto& [name, content] : files) {
    staged = WriteFile(absl::StrCat(version, "/", name), *content);
    if (staged.ok()) staged = LinkThroughData(dir_, name);  // dangling until the first `..data`
    if (!staged.ok()) break;
  }
  const std::string data_tmp = absl::StrCat(dir_, "/", kDataTmp);
  const std::string name = fs::path(version).filename().string();
  if (staged.ok() && ::unlink(data_tmp.c_str()) != 0 && errno != ENOENT) staged = Errno("unlink " + data_tmp);
  if (staged.ok() && ::symlink(name.c_str(), data_tmp.c_str()) != 0) staged = Errno("symlink " + data_tmp);
  // The swap: rename(2) replaces `..data` atomically, so a reader resolves the old folder or the new one.
  if (staged.ok() && ::rename(data_tmp.c_str(), absl::StrCat(dir_, "/", kData).c_str()) != 0) {
    staged = Errno("rename " + data_tmp);
  }
  if (!staged.ok()) {
    std::error_code ignored;
    fs::remove_all(version, ignored);
    return staged;
  }
  RemoveVersionsBut(name);
  return absl::OkStatus();
}

// Best effort: the new version is in place whatever happens here, and a folder left over goes with the
// next swap or with the object.
void StagedTlsFiles::RemoveVersionsBut(const std::string& current) const {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir_, error)) {
    const std::string name = entry.path().filename().string();
    if (!absl::StartsWith(name, "..") || name == current || fs::is_symlink(entry.symlink_status(error))) continue;
    fs::remove_all(entry.path(), error);
  }
}

}  // namespace topofit::expander
