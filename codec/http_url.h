#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace topofit::codec {

// An http(s) URL as the clients here dial it: the API server's (kubeconfig `server`), a notification
// webhook's. A URL without a scheme is https.
struct HttpUrl {
  bool https = true;
  std::string host;    // an IPv6 literal without its brackets
  int port = 443;      // the scheme's when the URL names none
  std::string path;    // from the first '/' on, without a trailing slash; may hold a query
  friend bool operator==(const HttpUrl&, const HttpUrl&) = default;
};

// Errors say which part is wrong and never repeat the URL: a webhook's URL is a secret (its path is the
// credential), so the caller decides what of it may be shown.
absl::StatusOr<HttpUrl> ParseHttpUrl(absl::string_view url);

}  // namespace topofit::codec
