#pragma once

#include <string>

#include "server/http_server.h"

namespace topofit::server {

// Whether `request` carries `Authorization: Bearer <token>`, compared in constant time (the comparison must
// not reveal how much of the token matched).
bool HasBearerToken(const HttpRequest& request, const std::string& token);

// `handler` behind the admin token: 403 when no token is configured (the endpoint is disabled), 401 when
// the request does not carry it.
HttpHandler RequireAdminToken(std::string token, HttpHandler handler);

// `handler` for callers on loopback (a container of the same pod, `kubectl port-forward`) and for others
// with the admin token: for endpoints that reveal pods (names, UIDs) on a port that probes reach from the
// node. Others get 401 without the token, 403 when no token is configured.
HttpHandler RequireLoopbackOrAdminToken(std::string token, HttpHandler handler);

}  // namespace topofit::server
