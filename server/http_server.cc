#include "server/http_server.h"

#include <dirent.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/sockios.h>
#include <netinet/in.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>

#include <httplib.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace topofit::server {
namespace {

// Requests served on one keep-alive connection before the server closes it.
constexpr size_t kKeepAliveRequests = 10000;

// Room a parser may read past the end of a body (simdjson's padding), so the extender parses a large body
// where it lies instead of copying it.
constexpr size_t kBodyPadding = 64;

// Plain-HTTP bodies at least this large are read from the socket in reads of up to kDirectReadBytes instead
// of through httplib's ContentReader, whose reads are 4 KiB each after a poll (CPPHTTPLIB_RECV_BUFSIZ is
// compiled into Debian's libcpp-httplib): ~35 ms of a 44 MiB body's ~85 ms on the bench VM.
constexpr size_t kDirectReadMinBytes = 256 << 10;
constexpr size_t kDirectReadBytes = 1 << 20;

// Request body buffers kept by the serving threads between requests: reading a 40 MiB body into fresh memory
// costs a page fault per 4 KiB page (~20 us each on the bench VM), more than moving the bytes. A thread
// keeps its last buffer while all the server's kept buffers stay within `limit` bytes: two of the largest
// bodies, as kube-scheduler's filter and prioritize calls come on one or two connections at a time. A kept
// buffer keeps its size too (stale bytes), so that a direct read grows it without zero-filling what it
// overwrites.
class KeptBodies {
 public:
  explicit KeptBodies(size_t limit) : limit_(limit) {}

  // This thread's kept buffer, or an empty one.
  std::string Take() {
    kept_bytes_ -= t_kept.counted;
    t_kept.counted = 0;
    return std::move(t_kept.buffer);
  }
  // Keeps `buffer` for this thread's next request if the limit allows, else frees it.
  void Keep(std::string buffer) {
    const size_t bytes = buffer.capacity();
    if (kept_bytes_.fetch_add(bytes) + bytes > limit_) {
      kept_bytes_ -= bytes;
      return;
    }
    t_kept.buffer = std::move(buffer);
    t_kept.counted = bytes;
  }

 private:
  struct Kept {
    std::string buffer;
    size_t counted = 0;  // bytes of kept_bytes_ it stands for
  };
  static thread_local Kept t_kept;  // a serving thread belongs to one server

  const size_t limit_;
  std::atomic<size_t> kept_bytes_{0};
};
thread_local KeptBodies::Kept KeptBodies::t_kept;


// 0.5 ms .. 10 s: extender calls take about a millisecond; anything near kube-scheduler's 30 s extender
// timeout is an incident.
const std::vector<double> kLatencyBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                             0.1,    0.25,  0.5,    1,     2.5,   5,     10};

// httplib and OpenSSL write to sockets without MSG_NOSIGNAL, so a client that hangs up mid-response
// raises SIGPIPE, whose default action kills the process. Every server needs it ignored.
void IgnoreSigpipe() {
  static std::once_flag once;
  std::call_once(once, [] { ::signal(SIGPIPE, SIG_IGN); });
}

std::string OpenSslError() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

absl::Status CheckReadable(const std::string& what, const std::string& path) {
  std::ifstream f(path);
  if (!f) return absl::InvalidArgumentError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
  return absl::OkStatus();
}

// httplib 0.11's SSLServer ignores a failure to load the client CA file and would then refuse every client;
// check that it holds at least one certificate.
absl::Status CheckCaFile(const std::string& path) {
  BIO* bio = BIO_new_file(path.c_str(), "r");
  if (bio == nullptr) return absl::InvalidArgumentError(absl::StrCat("TLS client CA ", path, ": ", OpenSslError()));
  int count = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    X509_free(cert);
    ++count;
  }
  BIO_free(bio);
  ERR_clear_error();  // the read that ended the loop leaves "no start line"
  if (count == 0) return absl::InvalidArgumentError(absl::StrCat("TLS client CA ", path, ": no PEM certificate"));
  return absl::OkStatus();
}

// httplib takes timeouts as (seconds, microseconds).
std::pair<time_t, time_t> SecondsAndMicros(absl::Duration d) {
  const absl::Duration whole = absl::Trunc(d, absl::Seconds(1));
  return {static_cast<time_t>(absl::ToInt64Seconds(whole)), static_cast<time_t>(absl::ToInt64Microseconds(d - whole))};
}

int PortOf(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return -1;
}

// Our end of the TCP connection from remote_ip:remote_port to local_port, or -1.
//
// httplib 0.11 gives a handler no way to close its connection: it decides keep-alive from the request
// alone. After a 413 the unread body would then be parsed as the next request (and buffered whole while
// looking for a line end). So we find the socket by its addresses — the same 4-tuple httplib reported in
// the request — and end it ourselves. Only the thread serving the connection calls this, so the fd cannot
// be closed under us, and the 4-tuple names one connection.
int FindConnectionFd(const std::string& remote_ip, int remote_port, int local_port) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (const dirent* e = ::readdir(dir)) {
    int fd = -1;
    if (!absl::SimpleAtoi(e->d_name, &fd) || fd == ::dirfd(dir)) continue;
    sockaddr_storage local{}, peer{};
    socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) continue;
    if (PortOf(local) != local_port) continue;
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) continue;
    if (PortOf(peer) != remote_port) continue;
    char host[NI_MAXHOST];
    if (::getnameinfo(reinterpret_cast<sockaddr*>(&peer), peer_len, host, sizeof(host), nullptr, 0,
                      NI_NUMERICHOST) != 0) {
      continue;
    }
    if (remote_ip == host) {
      found = fd;
      break;
    }
  }
  ::closedir(dir);
  return found;
}

// Ends the connection on `fd` after the response has been written, without reading the rest of the body.
void CloseConnectionNow(int fd) {
  // FIN after the response. Then give the response a moment to be acknowledged before the close: closing
  // with unread input makes the kernel send a RST, which drops whatever of our response is still unsent.
  ::shutdown(fd, SHUT_WR);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  char discard[16384];
  while (std::chrono::steady_clock::now() < deadline) {
    int unacked = 0;
    if (::ioctl(fd, SIOCOUTQ, &unacked) != 0 || unacked == 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 1) > 0 && ::recv(fd, discard, sizeof(discard), MSG_DONTWAIT) == 0) break;
  }
  // Put a socket already at end-of-file in the connection's place: the TCP connection closes now, and
  // httplib, still holding the number, reads EOF, leaves its keep-alive loop and closes the stand-in.
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0) {
    ::close(pair[1]);
    ::dup2(pair[0], fd);
    ::close(pair[0]);
  } else {
    ::shutdown(fd, SHUT_RDWR);  // no fds left: at least stop the traffic
  }
}

// Set by the request handler when the request's body was not read to its end; acted on once the response
// has been written (httplib's logger runs then, on the same thread).
thread_local bool t_close_after_response = false;

bool HasBody(const httplib::Request& req) {
  if (absl::EqualsIgnoreCase(req.get_header_value("Transfer-Encoding"), "chunked")) return true;
  const std::string length = req.get_header_value("Content-Length");
  return !length.empty() && length != "0";
}

// Reads the rest of a `length`-byte body from `fd` into body[offset, length), waiting at most `timeout` for
// each read. False if the client stops sending or the connection fails.
bool ReadRestOfBody(int fd, size_t offset, size_t length, absl::Duration timeout, std::string& body) {
  const int timeout_ms = static_cast<int>(std::max<int64_t>(1, absl::ToInt64Milliseconds(timeout)));
  while (offset < length) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    const ssize_t n = ::recv(fd, body.data() + offset, std::min(kDirectReadBytes, length - offset), 0);
    if (n <= 0) return false;
    offset += static_cast<size_t>(n);
  }
  return true;
}

// Everything but the body, which is read into `out` first.
void FillRequest(const httplib::Request& req, HttpRequest& out) {
  out.method = req.method;
  out.path = req.path;
  for (const auto& [k, v] : req.headers) out.headers.emplace(k, v);
  for (const auto& [k, v] : req.params) out.query.emplace(k, v);
}

// Writes `out` (its body with `spliced` at splice_at) as the response's content, each piece as it lies;
// `request`, whose body the pieces may view, is kept until httplib has written them and then gives its
// body buffer back to `bodies` (httplib writes and releases on the thread that served the request).
void SetSplicedContent(HttpResponse out, std::shared_ptr<HttpRequest> request, KeptBodies& bodies,
                       httplib::Response& res) {
  auto pieces = std::make_shared<std::vector<absl::string_view>>();
  auto owned = std::make_shared<std::string>(std::move(out.body));
  const absl::string_view text = *owned;
  const size_t at = std::min(out.splice_at, text.size());
  pieces->reserve(out.spliced.size() + 2);
  pieces->push_back(text.substr(0, at));
  pieces->insert(pieces->end(), out.spliced.begin(), out.spliced.end());
  pieces->push_back(text.substr(at));
  size_t length = 0;
  for (absl::string_view piece : *pieces) length += piece.size();
  res.set_content_provider(
      length, out.content_type,
      // httplib asks for the bytes from `offset` on until it has `length` of them (one call, unless a write
      // fails).
      [pieces, owned](size_t offset, size_t, httplib::DataSink& sink) {
        for (absl::string_view piece : *pieces) {
          if (offset >= piece.size()) {
            offset -= piece.size();
            continue;
          }
          if (!sink.write(piece.data() + offset, piece.size() - offset)) return false;
          offset = 0;
        }
        return true;
      },
      [request, &bodies](bool) { bodies.Keep(std::move(request->body)); });
}

}  // namespace

bool CaseInsensitiveLess::operator()(const std::string& a, const std::string& b) const {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](unsigned char x, unsigned char y) {
    return absl::ascii_tolower(x) < absl::ascii_tolower(y);
  });
}

std::string HttpRequest::Header(absl::string_view name) const {
  auto it = headers.find(std::string(name));
  return it == headers.end() ? std::string() : it->second;
}

bool HttpRequest::HasHeader(absl::string_view name) const { return headers.count(std::string(name)) > 0; }

HttpResponse JsonResponse(int status, const nlohmann::json& body) {
  // `replace` keeps invalid UTF-8 from a request (echoed in an error) from throwing here.
  return HttpResponse{status, "application/json",
                      body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

HttpResponse JsonError(int status, absl::string_view message) {
  return JsonResponse(status, nlohmann::json{{"error", std::string(message)}});
}

HttpMetrics HttpMetrics::Create(MetricsRegistry& registry) {
  return HttpMetrics{
      registry.AddCounter("topofit_http_requests_total", "HTTP requests answered, by route and status code.",
                          {"server", "route", "code"}),
      registry.AddHistogram("topofit_http_request_duration_seconds",
                            "Time from routing a request to having its response, by route.", kLatencyBuckets,
                            {"server", "route"}),
      registry.AddGauge("topofit_http_requests_in_flight", "HTTP requests being handled now.", {"server"}),
  };
}

struct HttpServer::Impl {
  explicit Impl(size_t max_body_bytes) : bodies(2 * (max_body_bytes + kBodyPadding)) {}

  std::unique_ptr<httplib::Server> server;
  std::atomic<bool> listen_returned{false};
  int port = 0;
  KeptBodies bodies;

  // Reads the request body into `body` (a kept buffer, see KeptBodies), at most options.max_body_bytes.
  // Returns 0 when read, else the status to answer.
  int ReadBody(const httplib::Request& req, const httplib::ContentReader& reader, const HttpServerOptions& options,
               std::string& body) const {
    const std::string length = req.get_header_value("Content-Length");
    const bool chunked = absl::EqualsIgnoreCase(req.get_header_value("Transfer-Encoding"), "chunked");
    uint64_t n = 0;
    if (!chunked && !length.empty()) {
      if (!absl::SimpleAtoi(length, &n)) return 400;
      // Refused from the header alone: httplib's own limit would read the whole body to discard it.
      if (n > options.max_body_bytes) return 413;
      body.reserve(n + kBodyPadding);
    }
    if (!chunked && length.empty() && req.method == "DELETE") {
      body.clear();
      return 0;  // httplib reads nothing here
    }
    if (!chunked && n >= kDirectReadMinBytes && options.tls_cert_file.empty()) {
      if (const int fd = FindConnectionFd(req.remote_addr, req.remote_port, req.local_port > 0 ? req.local_port : port);
          fd >= 0) {
        return ReadBodyDirect(reader, fd, n, options.read_timeout, body);
      }
    }
    body.clear();
    bool too_large = false;
    const bool ok = reader([&](const char* data, size_t size) {
      if (body.size() + size > options.max_body_bytes) {
        too_large = true;
        return false;  // stops httplib mid-body; the connection is closed after the response
      }
      body.append(data, size);
      return true;
    });
    if (too_large) return 413;
    return ok ? 0 : 400;
  }

  // A `length`-byte body read mostly from the socket itself. The bytes httplib already buffered (read with the
  // headers) come first through the reader, whose first chunk drains that buffer (it holds 4 KiB with the
  // headers; a chunk is up to 4 KiB); stopping the reader there leaves httplib's stream at the socket's
  // position, so the connection stays usable for the next request.
  static int ReadBodyDirect(const httplib::ContentReader& reader, int fd, size_t length, absl::Duration timeout,
                            std::string& body) {
    if (body.size() < length) body.resize(length);  // zero-fills only the growth
    size_t offset = 0;
    reader([&](const char* data, size_t size) {
      size = std::min(size, length);
      std::memcpy(body.data(), data, size);
      offset = size;
      return false;
    });
    if (offset == 0 || !ReadRestOfBody(fd, offset, length, timeout, body)) {
      body.clear();
      return 400;
    }
    body.resize(length);
    return 0;
  }
};

HttpServer::HttpServer(const HttpServerOptions& options, MetricsRegistry& registry)
    : options_(options), metrics_(HttpMetrics::Create(registry)), impl_(std::make_unique<Impl>(options.max_body_bytes)) {}

HttpServer::~HttpServer() { Stop(); }

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(const HttpServerOptions& options,
                                                               MetricsRegistry& registry) {
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("port ", options.port, " out of range"));
  }
  if (options.max_body_bytes == 0) return absl::InvalidArgumentError("max_body_bytes must be positive");
  if (options.threads < 1) return absl::InvalidArgumentError("threads must be at least 1");
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("TLS needs both a certificate file and a key file");
  }
  if (!options.tls_client_ca_file.empty() && options.tls_cert_file.empty()) {
    return absl::InvalidArgumentError("a client CA file needs a server certificate and key");
  }
  IgnoreSigpipe();

  std::unique_ptr<HttpServer> self(new HttpServer(options, registry));
  if (!options.tls_cert_file.empty()) {
    for (const auto& [what, path] : {std::pair<const char*, const std::string&>{"TLS certificate", options.tls_cert_file},
                                     {"TLS key", options.tls_key_file},
                                     {"TLS client CA", options.tls_client_ca_file}}) {
      if (path.empty()) continue;
      if (absl::Status s = CheckReadable(what, path); !s.ok()) return s;
    }
    if (!options.tls_client_ca_file.empty()) {
      if (absl::Status s = CheckCaFile(options.tls_client_ca_file); !s.ok()) return s;
    }
    ERR_clear_error();
    auto ssl = std::make_unique<httplib::SSLServer>(
        options.tls_cert_file.c_str(), options.tls_key_file.c_str(),
        options.tls_client_ca_file.empty() ? nullptr : options.tls_client_ca_file.c_str());
    if (!ssl->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat("TLS certificate ", options.tls_cert_file, " or key ",
                                                     options.tls_key_file, ": ", OpenSslError()));
    }
    SSL_CTX_set_min_proto_version(ssl->ssl_context(), TLS1_2_VERSION);
    self->impl_->server = std::move(ssl);
  } else {
    self->impl_->server = std::make_unique<httplib::Server>();
  }

  httplib::Server& svr = *self->impl_->server;
  const auto [read_s, read_us] = SecondsAndMicros(options.read_timeout);
  svr.set_read_timeout(read_s, read_us);
  const auto [write_s, write_us] = SecondsAndMicros(options.write_timeout);
  svr.set_write_timeout(write_s, write_us);
  // Whole seconds only in httplib 0.11; rounded up so a short idle timeout still allows keep-alive.
  svr.set_keep_alive_timeout(
      static_cast<time_t>(absl::ToInt64Seconds(absl::Ceil(options.idle_timeout, absl::Seconds(1)))));
  // httplib's default socket options add SO_REUSEPORT, which lets a second process bind our port and take
  // a share of its connections. Keep SO_REUSEADDR only (restart while old connections sit in TIME_WAIT).
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  // Replies are written in pieces; with Nagle's algorithm on, the last piece waits for the client's delayed
  // ACK (about 40 ms per request, measured with bench/extender_bench). kube-scheduler keeps one connection
  // busy with a request per scheduling cycle, so also keep connections for many requests, not httplib's 5.
  svr.set_tcp_nodelay(true);
  svr.set_keep_alive_max_count(kKeepAliveRequests);
  // A backstop only: bodies are limited in Impl::ReadBody before httplib would apply this.
  svr.set_payload_max_length(options.max_body_bytes);
  const int threads = options.threads;
  svr.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };

  HttpServer* s = self.get();
  auto dispatch = [s](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader* reader) {
    const auto start = std::chrono::steady_clock::now();  // a duration, so monotonic time, not the Clock
    t_close_after_response = false;
    s->metrics_.in_flight.Add(1, {s->options_.name});

    HttpResponse out;
    const Route* route = s->Match(req.path);
    const std::string route_label = route != nullptr ? route->pattern : "unmatched";
    // Shared: a response that splices in bytes of the request keeps it until the response is written.
    auto request = std::make_shared<HttpRequest>();
    request->body = s->impl_->bodies.Take();
    if (!reader) request->body.clear();
    const int body_status = reader ? s->impl_->ReadBody(req, *reader, s->options_, request->body) : 0;
    const bool body_read = reader ? body_status == 0 : !HasBody(req);  // httplib never reads a GET body
    if (body_status == 413) {
      out = JsonError(413, absl::StrCat("request body larger than ", s->options_.max_body_bytes, " bytes"));
    } else if (body_status != 0) {
      out = JsonError(body_status, "could not read the request body");
    } else if (route == nullptr) {
      out = JsonError(404, absl::StrCat("no route for ", req.path));
    } else {
      const std::string method = req.method == "HEAD" ? "GET" : req.method;
      auto it = route->handlers.find(method);
      if (it == route->handlers.end()) {
        std::vector<std::string> allowed;
        for (const auto& [m, h] : route->handlers) allowed.push_back(m);
        out = JsonError(405, absl::StrCat("method ", req.method, " not allowed on ", route->pattern, "; allowed: ",
                                          absl::StrJoin(allowed, ", ")));
        res.set_header("Allow", absl::StrJoin(allowed, ", "));
      } else {
        FillRequest(req, *request);
        if (route->prefix) request->path_suffix = req.path.substr(route->match.size());
        // Our handlers should not throw; if one does, this request fails and the server keeps serving.
        try {
          out = it->second(*request);
        } catch (const std::exception& e) {
          out = JsonError(500, absl::StrCat("internal error: ", e.what()));
        } catch (...) {
          out = JsonError(500, "internal error");
        }
      }
    }

    if (!body_read) {
      t_close_after_response = true;
      res.set_header("Connection", "close");
    }
    res.status = out.status;
    if (out.spliced.empty()) {
      res.set_content(std::move(out.body), out.content_type);
      s->impl_->bodies.Keep(std::move(request->body));
    } else {
      SetSplicedContent(std::move(out), request, s->impl_->bodies, res);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    s->metrics_.requests.Inc({s->options_.name, route_label, std::to_string(out.status)});
    s->metrics_.latency.Observe(seconds, {s->options_.name, route_label});
    s->metrics_.in_flight.Add(-1, {s->options_.name});
  };

  // Every path goes to `dispatch`, which routes itself: httplib answers 404 for a known path with another
  // method, and reads bodies only for the methods with a content reader.
  const std::string all = ".*";
  svr.Get(all, [dispatch](const httplib::Request& req, httplib::Response& res) { dispatch(req, res, nullptr); });
  svr.Options(all, [dispatch](const httplib::Request& req, httplib::Response& res) { dispatch(req, res, nullptr); });
  auto with_body = [dispatch](const httplib::Request& req, httplib::Response& res,
                              const httplib::ContentReader& reader) { dispatch(req, res, &reader); };
  svr.Post(all, with_body);
  svr.Put(all, with_body);
  svr.Patch(all, with_body);
  svr.Delete(all, with_body);

  // Errors httplib answers itself (a malformed request line, an unknown method) get a JSON body too.
  svr.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    HttpResponse out = JsonError(res.status, absl::StrCat("HTTP ", res.status));
    res.set_content(out.body, out.content_type);
    return httplib::Server::HandlerResponse::Handled;
  }));
  svr.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    HttpResponse out = JsonError(500, "internal error");
    res.status = 500;
    res.set_content(out.body, out.content_type);
  });
  // httplib calls the logger after writing the response, on the connection's thread.
  Impl* impl = self->impl_.get();
  svr.set_logger([impl](const httplib::Request& req, const httplib::Response&) {
    if (!t_close_after_response) return;
    t_close_after_response = false;
    const int local_port = req.local_port > 0 ? req.local_port : impl->port;
    if (int fd = FindConnectionFd(req.remote_addr, req.remote_port, local_port); fd >= 0) CloseConnectionNow(fd);
  });
  return self;
}

void HttpServer::Handle(const std::string& method, const std::string& path, HttpHandler handler) {
  const bool prefix = absl::EndsWith(path, "/*");
  auto it = std::find_if(routes_.begin(), routes_.end(), [&](const Route& r) { return r.pattern == path; });
  if (it == routes_.end()) {
    // "/explain/*" matches paths starting with "/explain/".
    routes_.push_back(Route{path, prefix ? path.substr(0, path.size() - 1) : path, prefix, {}});
    it = routes_.end() - 1;
  }
  it->handlers[absl::AsciiStrToUpper(method)] = std::move(handler);
}

const HttpServer::Route* HttpServer::Match(const std::string& path) const {
  const Route* best = nullptr;
  for (const Route& r : routes_) {
    if (!r.prefix) {
      if (r.match == path) return &r;
    } else if (absl::StartsWith(path, r.match) && (best == nullptr || r.match.size() > best->match.size())) {
      best = &r;
    }
  }
  return best;
}

absl::StatusOr<int> HttpServer::Start() {
  if (started_) return absl::FailedPreconditionError("server already started");
  httplib::Server& svr = *impl_->server;
  errno = 0;
  int port = options_.port;
  if (port == 0) {
    port = svr.bind_to_any_port(options_.address);
  } else if (!svr.bind_to_port(options_.address, port)) {
    port = -1;
  }
  if (port < 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options_.address, ":", options_.port,
                                               errno != 0 ? absl::StrCat(": ", std::strerror(errno)) : ""));
  }
  impl_->port = port;
  started_ = true;
  thread_ = std::thread([this] {
    impl_->server->listen_after_bind();
    impl_->listen_returned = true;
  });
  // httplib's stop() does nothing until the accept loop runs; wait for it so Stop() cannot be lost.
  while (!svr.is_running() && !impl_->listen_returned) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return port;
}

void HttpServer::Stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  // Closes the listening socket; the accept loop ends, then httplib joins its workers, each finishing the
  // request it is serving.
  impl_->server->stop();
  thread_.join();
}

}  // namespace topofit::server
