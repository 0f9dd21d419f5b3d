#include "mcp/http.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "mcp/json_rpc.h"
#include "mcp/request_meta.h"
#include "server/bearer_token.h"

namespace topofit::mcp {
namespace {

// A JSON-RPC error with no id, as the HTTP status's body.
server::HttpResponse HttpError(int status, int code, absl::string_view message) {
  return server::JsonResponse(status, Error(nullptr, code, message));
}

std::optional<std::string> HeaderIfAny(const server::HttpRequest& request, const char* name) {
  if (!request.HasHeader(name)) return std::nullopt;
  return std::string(absl::StripAsciiWhitespace(request.Header(name)));
}

// Revision 2026-07-28's statuses (streamable-http): a request refused before its method ran (its _meta,
// headers or revision) 400, a method this server does not have 404 (its -32601 body tells it from a 404 of
// a server without /mcp), every other reply 200 with its JSON-RPC error, if any, inside.
int ModernStatus(const Answer& answer) {
  if (answer.refused) return 400;
  const auto error = answer.reply->find("error");
  return error != answer.reply->end() && (*error)["code"] == kMethodNotFound ? 404 : 200;
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
        // A 2025 revision this server does not speak. A 2026 one, or any under a body naming its revision
        // in _meta, is the message's to check (mcp/server.h): 2026-07-28 has its own error for it.
        const std::optional<std::string> version = HeaderIfAny(request, "MCP-Protocol-Version");
        if (version && !IsLegacyProtocolVersion(*version) && !NamesModernEra(*version) &&
            !ClaimsRequestMeta(ParseMessage(request.body).params)) {
          return HttpError(400, kInvalidRequest,
                           absl::StrCat("Bad Request: unsupported MCP-Protocol-Version ",
                                        request.Header("MCP-Protocol-Version")));
        }
        if (const std::string type = absl::AsciiStrToLower(request.Header("Content-Type"));
            !type.empty() && !absl::StartsWith(type, "application/json")) {
          return HttpError(415, kInvalidRequest, "Unsupported Media Type: the body must be application/json");
        }
        const Answer answer = mcp.Serve(
            request.body, MirroredHeaders{version, HeaderIfAny(request, "Mcp-Method"), HeaderIfAny(request, "Mcp-Name")});
        if (!answer.reply) return server::HttpResponse(202, "application/json", "");
        if (answer.modern) return server::JsonResponse(ModernStatus(answer), *answer.reply);
        // A message that is not a request gets its error without an id, as the HTTP error.
        if (answer.reply->contains("error") && (*answer.reply)["id"].is_null()) {
          return server::JsonResponse(400, *answer.reply);
        }
        return server::JsonResponse(200, *answer.reply);
      },
      server::RouteOptions{.blocking = true});
}

}  // namespace topofit::mcp
