#pragma once

// The HTTP(S) server shared by the scheduler extender, the expander's ops port and /metrics, on Boost.Beast
// and Asio. It owns its connections, so hostile or slow clients cost bounded memory and no thread:
//   - asynchronous I/O on a few threads: a connection waiting for bytes occupies no thread, so slow clients
//     never hold up others; handlers that wait on something slow (the API server, for bind) are registered
//     as blocking and run on a separate bounded pool, never on the I/O threads;
//   - bounds on everything a client controls: header fields and header bytes (431), the body size from
//     Content-Length before any of it is read and as chunks arrive (413), a deadline per request from its
//     first byte to its last (408, then the connection is dropped; not a per-read timeout a byte every few
//     seconds defeats), an idle timeout between requests, a connection limit at which a new connection
//     closes the longest-idle one (between requests, never one mid-request), so clients hoarding idle
//     connections cannot keep real ones waiting in the listen backlog;
//   - JSON errors: unknown path 404, known path with another method 405, a throwing handler 500;
//   - per-route request counts and latency, open connections (HttpMetrics);
//   - large bodies moved at the speed of the machine (bench/RESULTS.md): body buffers kept between requests
//     (up to twice max_body_bytes in all), and replies that splice in bytes of the request
//     (HttpResponse::spliced) written as one gathered write without joining them;
//   - Start() that reports a bind error; Stop() that stops accepting, closes idle connections, lets
//     responses in flight be written for at most drain_timeout, then closes the rest.
// TLS: 1.2 and 1.3 with forward-secret AEAD suites only (server/tls_context.h).
//
// Why Beast rather than cpp-httplib (used before): httplib 0.11 serves each connection on one thread of a
// fixed pool, times out per read, has no limit on header count, and gives a handler no way to close its
// connection or to read a body in bulk; working around it meant scanning /proc/self/fd and dup2 over its
// sockets. Beast gives a parser with header and body limits, asynchronous streams with deadlines, and the
// sockets themselves, from Debian's Boost, which topofit already depends on (Boost.Graph).
//
// Beast and Asio stay out of this header so callers depend only on these types.

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "server/metrics.h"

namespace topofit::server {

struct HttpServerOptions {
  std::string address = "0.0.0.0";
  int port = 0;  // 0 picks a free port (tests); Start() returns the one bound
  // Both set: HTTPS. tls_client_ca_file set as well: clients must present a certificate signed by it.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  // How often new connections look whether those files changed (a renewed certificate), and load them if so
  // (server/tls_context.h: ReloadingTlsContext).
  absl::Duration tls_reload_interval = absl::Seconds(10);
  size_t max_body_bytes = 8 << 20;       // larger bodies get 413, refused from Content-Length unread
  size_t max_header_bytes = 64 << 10;    // request line and fields; beyond: 431
  size_t max_header_fields = 100;        // beyond: 431
  // From a request's first byte to its last (header and body, TLS handshake included for a connection's
  // first request); a client still sending then gets 408 and is dropped.
  absl::Duration request_timeout = absl::Seconds(10);
  absl::Duration write_timeout = absl::Seconds(10);  // for writing one response
  absl::Duration idle_timeout = absl::Seconds(60);   // a keep-alive connection waiting for its next request
  absl::Duration drain_timeout = absl::Seconds(5);   // Stop(): how long responses in flight may take
  int threads = 4;             // I/O threads; they also run the handlers not registered as blocking
  int blocking_threads = 8;    // run the handlers registered as blocking
  int blocking_queue = 64;     // blocking requests waiting for one of those threads; beyond: 503
  // Open at once. At the limit a new connection closes the connection that has waited longest for its next
  // request, once that one has waited evict_idle_after; if none is idle, new ones wait in the listen backlog.
  int max_connections = 1024;
  // A connection just accepted or just answered gets this long to send its request before it can be closed
  // to make room: its client is about to use it.
  absl::Duration evict_idle_after = absl::Milliseconds(200);
  int listen_backlog = 1024;   // the kernel caps it at net.core.somaxconn
  std::string name;  // the `server` label of the metrics and the log prefix, e.g. "extender"
};

// Case-insensitive header names, as HTTP defines them.
struct CaseInsensitiveLess {
  bool operator()(const std::string& a, const std::string& b) const;
};
using HttpHeaders = std::multimap<std::string, std::string, CaseInsensitiveLess>;

struct HttpRequest {
  std::string method;
  std::string path;  // without the query string
  std::string body;
  HttpHeaders headers;
  std::multimap<std::string, std::string> query;  // decoded ?k=v pairs
  // For a prefix route ("/explain/*"), the rest of the path after the prefix ("ns/pod"); else empty.
  std::string path_suffix;
  // Whether the peer connected from a loopback address (127.0.0.0/8, ::1, or ::ffff:127.x.y.z): a process in
  // the same network namespace, e.g. a container of the same pod or `kubectl port-forward`.
  bool from_loopback = false;

  // The first value of header `name` (any case), or "" if absent.
  std::string Header(absl::string_view name) const;
  bool HasHeader(absl::string_view name) const;
};

struct HttpResponse {
  HttpResponse() = default;
  HttpResponse(int status, std::string content_type, std::string body)
      : status(status), content_type(std::move(content_type)), body(std::move(body)) {}

  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  // Bytes written at offset `splice_at` of `body` without being copied into it, in order: views of the
  // request's body (the server keeps the request until the response is written) or of static storage.
  // A filter reply echoes tens of MiB of its request this way instead of building a second copy.
  std::vector<absl::string_view> spliced;
  size_t splice_at = 0;
};

HttpResponse JsonResponse(int status, const nlohmann::json& body);
// {"error": message}
HttpResponse JsonError(int status, absl::string_view message);

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct RouteOptions {
  // The handler may wait on something slow (the API server): it runs on the blocking pool, so it cannot
  // delay the routes served on the I/O threads.
  bool blocking = false;
};

// The metrics every HTTP server reports, declared once. Servers in one process share the families and
// tell themselves apart by the `server` label.
struct HttpMetrics {
  static HttpMetrics Create(MetricsRegistry& registry);

  Counter& requests;       // topofit_http_requests_total{server,route,code}
  Histogram& latency;      // topofit_http_request_duration_seconds{server,route}
  Gauge& in_flight;        // topofit_http_requests_in_flight{server}
  Gauge& connections;      // topofit_http_connections{server}
  Counter& dropped;        // topofit_http_connections_dropped_total{server,reason}
  Counter& tls_reloads;    // topofit_tls_reloads_total{server,result}
};

class HttpServer {
 public:
  // Fails (never aborts) on bad options or an unreadable or invalid certificate, key or CA file.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Create(const HttpServerOptions& options,
                                                            MetricsRegistry& registry);
  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Adds a route; call before Start(). `path` is exact ("/filter"), or a prefix when it ends in "/*"
  // ("/explain/*" matches "/explain/ns/pod"). The exact route wins over a prefix; the longer prefix
  // wins over the shorter. Registering the same method and path again replaces the handler.
  // `method` is upper case ("GET", "POST", ...); a GET route answers HEAD as well.
  void Handle(const std::string& method, const std::string& path, HttpHandler handler,
              RouteOptions options = {});

  // Binds and serves on threads of its own. Returns the bound port, or an error such as the port being in
  // use. Call once.
  absl::StatusOr<int> Start();

  // Stops accepting and closes idle connections and requests still being received; lets responses in
  // flight be written for up to drain_timeout, then closes the rest; waits for handlers still running (a
  // handler cannot be interrupted) and joins the threads. Idempotent.
  void Stop();

  bool is_tls() const { return !options_.tls_cert_file.empty(); }
  const HttpMetrics& metrics() const { return metrics_; }
  const std::string& name() const { return options_.name; }

 private:
  struct Handler {
    HttpHandler handle;
    bool blocking = false;
  };
  struct Route {
    std::string pattern;  // as registered; the `route` metric label
    std::string match;    // the exact path, or the prefix without the '*'
    bool prefix = false;
    std::map<std::string, Handler> handlers;  // by method
  };
  struct Impl;
  template <typename Stream>
  friend class Connection;

  HttpServer(const HttpServerOptions& options, MetricsRegistry& registry);
  const Route* Match(const std::string& path) const;

  const HttpServerOptions options_;
  HttpMetrics metrics_;
  std::vector<Route> routes_;
  std::unique_ptr<Impl> impl_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace topofit::server
