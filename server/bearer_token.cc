#include "server/bearer_token.h"

#include <openssl/crypto.h>

#include <utility>

namespace topofit::server {

bool HasBearerToken(const HttpRequest& request, const std::string& token) {
  const std::string header = request.Header("Authorization");
  const std::string expected = "Bearer " + token;
  return header.size() == expected.size() && CRYPTO_memcmp(header.data(), expected.data(), header.size()) == 0;
}

HttpHandler RequireAdminToken(std::string token, HttpHandler handler) {
  return [token = std::move(token), handler = std::move(handler)](const HttpRequest& request) {
    if (token.empty()) return JsonError(403, "admin endpoints are disabled: start with --admin-token-file");
    if (!HasBearerToken(request, token)) return JsonError(401, "missing or wrong bearer token");
    return handler(request);
  };
}

HttpHandler RequireLoopbackOrAdminToken(std::string token, HttpHandler handler) {
  return [token = std::move(token), handler = std::move(handler)](const HttpRequest& request) {
    if (request.from_loopback) return handler(request);
    if (token.empty()) {
      return JsonError(403, "served on loopback only (kubectl port-forward); beyond it, start with "
                            "--admin-token-file and send the token");
    }
    if (!HasBearerToken(request, token)) return JsonError(401, "missing or wrong bearer token");
    return handler(request);
  };
}

}  // namespace topofit::server
