#include "mcp/http.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "mcp/json_rpc.h"
#include "server/bearer_token.h"

namespace topofit::mcp {
namespace {

// A JSON-RPC error with no id, as the HTTP status's body.
server::HttpResponse HttpError(int status, int code, absl::string_view message) {
  return server::JsonResponse(status, Error(nullptr, code, message));
}

}  // namespace

bool IsAllowedOrigin(const std::string& origin) {
  if (origin.empty()) return true;
  absl::string_view rest = origin;
  if (!absl::ConsumePrefix(&rest, "http://") && !absl::ConsumePrefix(&rest, "https://")) return false;
  for (absl::string_view host : {"localhost", "127.0.0.1", "[::1]"}) {
    absl::string_view after = rest;
    if (!absl::ConsumePrefix(&after, host)) continue;
    if (after.empty()) return true;
    uint32_t port = 0;
    if (absl::ConsumePrefix(&after, ":") && absl::SimpleAtoi(after, &port) && port > 0 && port < 65536 &&
        absl::ascii_isdigit(after.front())) {
      return true;
    }
  }
  return false;
}

void RegisterMcpRoute(server::HttpServer& server, const McpServer& mcp, McpRouteOptions options) {
  server.Handle(
      "POST", "/mcp",
      [&mcp, token = std::move(options.admin_token), beyond_loopback = options.beyond_loopback](
          const server::HttpRequest& request) {
        if (!request.from_loopback && !beyond_loopback) {
          return HttpError(403, kInvalidRequest,
                           "Forbidden: /mcp answers loopback peers only (kubectl port-forward); start with "
                           "--mcp-beyond-loopback to serve others with the admin token");
        }
        if (const std::string origin = request.Header("Origin"); !IsAllowedOrigin(origin)) {
          return HttpError(403, kInvalidRequest, absl::StrCat("Forbidden: Origin ", origin, " is not a loopback origin"));
        }
        if (token.empty()) return HttpError(403, kInvalidRequest, "Forbidden: /mcp is disabled: start with --admin-token-file");
        if (!server::HasBearerToken(request, token)) return HttpError(401, kInvalidRequest, "Unauthorized: missing or wrong bearer token");
        if (request.HasHeader("MCP-Protocol-Version") &&
            !IsSupportedProtocolVersion(request.Header("MCP-Protocol-Version"))) {
          return HttpError(400, kInvalidRequest,
                           absl::StrCat("Bad Request: unsupported MCP-Protocol-Version ",
                                        request.Header("MCP-Protocol-Version")));
        }
        if (const std::string type = absl::AsciiStrToLower(request.Header("Content-Type"));
            !type.empty() && !absl::StartsWith(type, "application/json")) {
          return HttpError(415, kInvalidRequest, "Unsupported Media Type: the body must be application/json");
        }
        std::optional<nlohmann::json> reply = mcp.Handle(request.body);
        if (!reply) return server::HttpResponse(202, "application/json", "");
        // A message that is not a request gets its error without an id, as the HTTP error.
        if (reply->contains("error") && (*reply)["id"].is_null()) return server::JsonResponse(400, *reply);
        return server::JsonResponse(200, *reply);
      },
      server::RouteOptions{.blocking = true});
}

}  // namespace topofit::mcp
