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

}  // namespace topofit::server
