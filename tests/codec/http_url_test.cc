#include "codec/http_url.h"

#include <catch2/catch.hpp>

#include <string>

namespace topofit::codec {
namespace {

TEST_CASE("ParseHttpUrl: scheme, host, port and path, the scheme's port by default", "[codec]") {
  const HttpUrl slack = ParseHttpUrl("https://hooks.slack.com/services/T0/B0/xyz").value();
  CHECK(slack.https);
  CHECK(slack.host == "hooks.slack.com");
  CHECK(slack.port == 443);
  CHECK(slack.path == "/services/T0/B0/xyz");
  const HttpUrl plain = ParseHttpUrl("http://10.0.0.7:8080/hook/?team=ml").value();
  CHECK_FALSE(plain.https);
  CHECK(plain.port == 8080);
  CHECK(plain.path == "/hook/?team=ml");
  const HttpUrl v6 = ParseHttpUrl("https://[fd00::1]:6443/").value();
  CHECK(v6.host == "fd00::1");
  CHECK(v6.port == 6443);
  CHECK(v6.path.empty());
  CHECK(ParseHttpUrl("api.example.com").value().https);  // no scheme: https, as kubeconfig servers
}

TEST_CASE("ParseHttpUrl: errors say what is wrong without repeating the URL", "[codec]") {
  for (const char* bad : {"ftp://files.example.com/s3cr3t", "https:///s3cr3t", "https://host:99999/s3cr3t",
                          "https://[fd00::1/s3cr3t", "https://host:http/s3cr3t"}) {
    INFO(bad);
    const absl::StatusOr<HttpUrl> parsed = ParseHttpUrl(bad);
    REQUIRE_FALSE(parsed.ok());
    CHECK(std::string(parsed.status().message()).find("s3cr3t") == std::string::npos);
  }
}

}  // namespace
}  // namespace topofit::codec
