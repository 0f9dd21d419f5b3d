#include "expander/staged_tls_files.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace topofit::expander {
namespace {

namespace fs = std::filesystem;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The version folders: every entry but `..data` whose name starts with "..".
std::vector<std::string> Versions(const std::string& dir) {
  std::vector<std::string> out;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("..", 0) == 0 && name != "..data") out.push_back(name);
  }
  return out;
}

std::unique_ptr<StagedTlsFiles> Make() {
  absl::StatusOr<std::unique_ptr<StagedTlsFiles>> made = StagedTlsFiles::Create();
  REQUIRE(made.ok());
  return *std::move(made);
}

TEST_CASE("Staged TLS files live in a private folder that goes with the object", "[expander][tls]") {
  std::string dir;
  {
    const std::unique_ptr<StagedTlsFiles> staged = Make();
    dir = staged->dir();
    struct stat st {};
    REQUIRE(::stat(dir.c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0700);  // it holds a private key
    REQUIRE(staged->Publish({"CERT 1", "KEY 1", ""}).ok());
  }
  CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("Staged TLS files are published as the kubelet updates a Secret: one version, swapped whole",
          "[expander][tls]") {
  const std::unique_ptr<StagedTlsFiles> staged = Make();
  REQUIRE(staged->Publish({"CERT 1", "KEY 1", ""}).ok());
  CHECK(Read(staged->cert()) == "CERT 1");
  CHECK(Read(staged->key()) == "KEY 1");
  CHECK_FALSE(fs::exists(staged->client_ca()));  // none given
  CHECK(fs::read_symlink(staged->cert()) == "..data/tls.crt");
  CHECK(fs::read_symlink(staged->key()) == "..data/tls.key");
  const std::vector<std::string> first = Versions(staged->dir());
  REQUIRE(first.size() == 1);
  CHECK(fs::read_symlink(staged->dir() + "/..data") == first[0]);

  // A reader that opened the old version keeps reading it whole; the next open sees the new one.
  std::ifstream opened(staged->key());
  REQUIRE(staged->Publish({"CERT 2", "KEY 2", "CA 2"}).ok());
  std::stringstream old_key;
  old_key << opened.rdbuf();
  CHECK(old_key.str() == "KEY 1");
  CHECK(Read(staged->cert()) == "CERT 2");
  CHECK(Read(staged->key()) == "KEY 2");
  CHECK(Read(staged->client_ca()) == "CA 2");
  const std::vector<std::string> second = Versions(staged->dir());
  REQUIRE(second.size() == 1);  // the old version is removed
  CHECK(second[0] != first[0]);
  CHECK_FALSE(fs::exists(staged->dir() + "/..data_tmp"));
}

TEST_CASE("Staged TLS files: a version that cannot be written leaves the previous one in place", "[expander][tls]") {
  const std::unique_ptr<StagedTlsFiles> staged = Make();
  REQUIRE(staged->Publish({"CERT 1", "KEY 1", ""}).ok());
  // Something in the way of the swap's new symlink (a folder where `..data_tmp` goes).
  fs::create_directories(staged->dir() + "/..data_tmp/in-the-way");
  const absl::Status published = staged->Publish({"CERT 2", "KEY 2", ""});
  CHECK(published.code() == absl::StatusCode::kInternal);
  CHECK(Read(staged->cert()) == "CERT 1");
  CHECK(Read(staged->key()) == "KEY 1");
  CHECK(Versions(staged->dir()).size() == 2);  // the one in place and ..data_tmp; the failed one is removed
}

}  // namespace
}  // namespace topofit::expander
