#include "codec/http_url.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace topofit::codec {

absl::StatusOr<HttpUrl> ParseHttpUrl(absl::string_view url) {
  HttpUrl parsed;
  if (absl::ConsumePrefix(&url, "http://")) {
    parsed.https = false;
    parsed.port = 80;
  } else if (!absl::ConsumePrefix(&url, "https://") && absl::StrContains(url, "://")) {
    return absl::InvalidArgumentError("unsupported URL scheme (http or https)");
  }
  const size_t slash = url.find('/');
  absl::string_view authority = url.substr(0, slash);
  if (slash != absl::string_view::npos) parsed.path = std::string(absl::StripSuffix(url.substr(slash), "/"));
  absl::string_view port;
  if (absl::ConsumePrefix(&authority, "[")) {  // IPv6 literal
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos) return absl::InvalidArgumentError("unterminated IPv6 address in URL");
    parsed.host = std::string(authority.substr(0, close));
    absl::string_view rest = authority.substr(close + 1);
    if (absl::ConsumePrefix(&rest, ":")) port = rest;
  } else {
    const size_t colon = authority.rfind(':');
    parsed.host = std::string(authority.substr(0, colon));
    if (colon != absl::string_view::npos) port = authority.substr(colon + 1);
  }
  if (parsed.host.empty()) return absl::InvalidArgumentError("no host in URL");
  if (!port.empty() && (!absl::SimpleAtoi(port, &parsed.port) || parsed.port <= 0 || parsed.port > 65535)) {
    return absl::InvalidArgumentError(absl::StrCat("bad port in URL: \"", port, "\""));
  }
  return parsed;
}

}  // namespace topofit::codec
