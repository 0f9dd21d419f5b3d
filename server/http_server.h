#pragma once

// A thin HTTP(S) server over cpp-httplib shared by the scheduler extender, the expander's ops port and
// /metrics. It adds what every topofit endpoint needs and httplib 0.11 does not give:
//   - JSON errors: unknown path 404, known path with another method 405, a throwing handler 500;
//   - a body limit that answers 413 without reading (or buffering) the rest of the body, for
//     Content-Length and chunked bodies alike, and then closes the connection;
//   - per-route request counts and latency (HttpMetrics);
//   - large bodies moved at the speed of the machine (bench/RESULTS.md): body buffers kept between
//     requests (up to twice max_body_bytes in all), large plain-HTTP bodies read in large reads rather than
//     httplib's 4 KiB ones, and replies that splice in bytes of the request (HttpResponse::spliced) written
//     without joining them;
//   - Start() that reports a bind error and Stop() that lets in-flight requests finish.
//
// httplib stays out of this header so callers depend only on these types.

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "server/metrics.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace topofit::server {

struct HttpServerOptions {
  std::string address = "0.0.0.0";
  int port = 0;  // 0 picks a free port (tests); Start() returns the one bound
  // Both set: HTTPS. tls_client_ca_file set as well: clients must present a certificate signed by it.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  size_t max_body_bytes = 8 << 20;
  absl::Duration read_timeout = absl::Seconds(10);   // per read of a request, not for the whole request
  absl::Duration write_timeout = absl::Seconds(10);  // per write of a response
  // How long an idle keep-alive connection is kept. Stop() waits for idle connections up to this long
  // (httplib 0.11 checks for shutdown only between requests).
  absl::Duration idle_timeout = absl::Seconds(5);
  int threads = 8;   // connections served at once
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

// The metrics every HTTP server reports, declared once. Servers in one process share the families and
// tell themselves apart by the `server` label.
struct HttpMetrics {
  static HttpMetrics Create(MetricsRegistry& registry);

  Counter& requests;       // topofit_http_requests_total{server,route,code}
  Histogram& latency;      // topofit_http_request_duration_seconds{server,route}
  Gauge& in_flight;        // topofit_http_requests_in_flight{server}
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
  void Handle(const std::string& method, const std::string& path, HttpHandler handler);

  // Binds and serves on a thread of its own. Returns the bound port, or an error such as the port being
  // in use. Call once.
  absl::StatusOr<int> Start();

  // Stops accepting, lets requests in flight finish, and joins the threads. Idempotent.
  void Stop();

  bool is_tls() const { return !options_.tls_cert_file.empty(); }
  const HttpMetrics& metrics() const { return metrics_; }
  const std::string& name() const { return options_.name; }

 private:
  struct Route {
    std::string pattern;  // as registered; the `route` metric label
    std::string match;    // the exact path, or the prefix without the '*'
    bool prefix = false;
    std::map<std::string, HttpHandler> handlers;  // by method
  };
  struct Impl;

  HttpServer(const HttpServerOptions& options, MetricsRegistry& registry);
  const Route* Match(const std::string& path) const;

  const HttpServerOptions options_;
  HttpMetrics metrics_;
  std::vector<Route> routes_;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace topofit::server
