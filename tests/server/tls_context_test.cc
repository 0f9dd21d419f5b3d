#include "server/tls_context.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/server/mounted_secret.h"
#include "tests/server/test_certs.h"

namespace topofit::server {
namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The expander's gRPC server stages what on_loaded is handed: only a pair found good, exactly as read.
TEST_CASE("TLS reload: on_loaded is handed the pair found good, and its error keeps the previous one",
          "[tls]") {
  const std::unique_ptr<testing::TestCerts> first = testing::TestCerts::Create(2).value();
  const std::unique_ptr<testing::TestCerts> renewed = testing::TestCerts::Create(1002).value();
  testing::MountedSecret secret(first->dir() + "/mounted");
  secret.Update(first->server_cert_file(), first->server_key_file());
  std::vector<std::string> loaded;  // the certificates handed over
  absl::Status taking = absl::OkStatus();
  std::vector<absl::Status> reported;
  absl::StatusOr<std::unique_ptr<ReloadingTlsContext>> made = ReloadingTlsContext::Create(
      {secret.cert(), secret.key(), ""}, absl::ZeroDuration(),  // looks at every Current()
      [&](const absl::Status& reload) { reported.push_back(reload); },
      [&](const TlsPem& pem) {
        loaded.push_back(pem.cert);
        CHECK(pem.key == Read(secret.key()));
        return taking;
      });
  REQUIRE(made.ok());
  ReloadingTlsContext& tls = **made;
  CHECK(loaded == std::vector<std::string>{Read(first->server_cert_file())});
  const auto initial = tls.Current();

  // A certificate with another's key: not handed over, the previous context stays.
  secret.Update(renewed->server_cert_file(), first->server_key_file());
  CHECK(tls.Current() == initial);
  CHECK(loaded.size() == 1);
  REQUIRE(reported.size() == 1);
  CHECK_THAT(std::string(reported[0].message()), Catch::Contains("does not belong to certificate"));

  // A good pair that on_loaded cannot take: the previous context stays, and that error is the report.
  taking = absl::InternalError("disk full");
  secret.Update(renewed->server_cert_file(), renewed->server_key_file());
  CHECK(tls.Current() == initial);
  CHECK(loaded.size() == 2);
  REQUIRE(reported.size() == 2);
  CHECK(reported[1] == taking);

  // Taken on the next change.
  taking = absl::OkStatus();
  secret.Update(renewed->server_cert_file(), renewed->server_key_file());
  CHECK(tls.Current() != initial);
  CHECK(loaded.back() == Read(renewed->server_cert_file()));
  REQUIRE(reported.size() == 3);
  CHECK(reported[2].ok());
}

TEST_CASE("TLS reload: Create fails when on_loaded cannot take the first pair", "[tls]") {
  const std::unique_ptr<testing::TestCerts> certs = testing::TestCerts::Create().value();
  const absl::StatusOr<std::unique_ptr<ReloadingTlsContext>> made = ReloadingTlsContext::Create(
      {certs->server_cert_file(), certs->server_key_file(), ""}, absl::Seconds(1), {},
      [](const TlsPem&) { return absl::InternalError("disk full"); });
  CHECK(made.status() == absl::InternalError("disk full"));
}

}  // namespace
}  // namespace topofit::server
