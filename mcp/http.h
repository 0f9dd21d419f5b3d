#pragma once

#include <string>

#include "mcp/server.h"
#include "server/http_server.h"

namespace topofit::mcp {

// Whether an Origin header may reach /mcp: absent (not a browser), or a loopback origin (http(s)://
// localhost, 127.0.0.1 or [::1], any port). A browser page elsewhere that DNS-rebinds a name to this host
// sends its own origin and is refused.
bool IsAllowedOrigin(const std::string& origin);

struct McpRouteOptions {
  std::string admin_token;  // empty: /mcp is disabled
  // The ops port listens beyond loopback for probes and Prometheus; /mcp answers only peers on loopback (a
  // container of the pod, `kubectl port-forward`) unless this is set (--mcp-beyond-loopback).
  bool beyond_loopback = false;
};

// The Streamable HTTP transport at /mcp (POST; GET and DELETE answer 405: no server-initiated stream, no
// sessions, in either revision), in this order: a peer beyond loopback 403 (unless
// options.beyond_loopback), a foreign Origin 403 (DNS-rebinding protection), then the admin token (403 when
// none is configured, 401 when missing or wrong), an MCP-Protocol-Version header naming a 2025 revision this
// server does not speak 400 (unless the body names its revision in _meta: then it is that 2026 request's
// header mismatch), a body that is not JSON 415; then the message (McpServer::Serve). A 2025-11-25
// one: a request's reply 200 (application/json; JSON-RPC errors inside), a notification or response 202, a
// message that is not JSON-RPC 400 with the error. A 2026-07-28 one (its _meta or its header names a 2026
// revision): its Mcp-Method, Mcp-Name and MCP-Protocol-Version headers checked against the body, and a
// request refused for its _meta, headers or revision 400, an unknown method 404, any other reply 200.
// `mcp` outlives the server.
void RegisterMcpRoute(server::HttpServer& server, const McpServer& mcp, McpRouteOptions options);

}  // namespace topofit::mcp
