#include "server/http_server.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <spdlog/spdlog.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/http_request_parser.h"
#include "server/logging.h"
#include "server/tls_context.h"

namespace topofit::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

// Bytes read while a connection waits for its next request; the request's deadline starts with them.
constexpr size_t kFirstReadBytes = 16 << 10;

// After a response that ends a connection with input possibly unread (413, 431), how long the server keeps
// reading and discarding it before closing: closing with unread input makes the kernel send a reset, which
// can destroy the response before the client has read it.
constexpr auto kLinger = std::chrono::milliseconds(500);
constexpr size_t kLingerReadBytes = 16 << 10;

// 0.5 ms .. 10 s: extender calls take about a millisecond; anything near kube-scheduler's 30 s extender
// timeout is an incident.
const std::vector<double> kLatencyBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                             0.1,    0.25,  0.5,    1,     2.5,   5,     10};

constexpr absl::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

// Request body buffers kept between requests: reading a 40 MiB body into fresh memory costs a page fault per
// 4 KiB page (~20 us each on the bench VM), more than moving the bytes. Buffers are kept while all of them
// stay within `limit` bytes: two of the largest bodies, as kube-scheduler's filter and prioritize calls
// come on one or two connections at a time.
class KeptBodies {
 public:
  explicit KeptBodies(size_t limit) : limit_(limit) {}

  // The most recently kept buffer (empty, with its capacity), or an empty one.
  std::string Take() {
    std::lock_guard<std::mutex> lock(mu_);
    if (kept_.empty()) return {};
    std::string buffer = std::move(kept_.back());
    kept_.pop_back();
    kept_bytes_ -= buffer.capacity();
    return buffer;
  }
  // Keeps `buffer` for a later request if the limit allows, else frees it.
  void Keep(std::string buffer) {
    const size_t bytes = buffer.capacity();
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes == 0 || kept_bytes_ + bytes > limit_) return;
    buffer.clear();
    kept_bytes_ += bytes;
    kept_.push_back(std::move(buffer));
  }

 private:
  const size_t limit_;
  std::mutex mu_;
  std::vector<std::string> kept_;
  size_t kept_bytes_ = 0;
};

HttpResponse RunHandler(const HttpHandler& handler, const HttpRequest& request) {
  // Our handlers should not throw; if one does, this request fails and the server keeps serving.
  try {
    return handler(request);
  } catch (const std::exception& e) {
    return JsonError(500, absl::StrCat("internal error: ", e.what()));
  } catch (...) {
    return JsonError(500, "internal error");
  }
}

std::string ResponseHead(const HttpResponse& out, size_t length, bool keep_alive, const std::string& allow) {
  const beast::string_view reason = http::obsolete_reason(static_cast<http::status>(out.status));
  return absl::StrCat("HTTP/1.1 ", out.status, " ", absl::string_view(reason.data(), reason.size()),
                      "\r\nContent-Type: ", out.content_type, "\r\nContent-Length: ", length, "\r\n",
                      allow.empty() ? "" : absl::StrCat("Allow: ", allow, "\r\n"),
                      keep_alive ? "" : "Connection: close\r\n", "\r\n");
}

// Bytes written on `socket` that its peer has not acknowledged yet.
int Unacknowledged(tcp::socket& socket) {
  int unacked = 0;
  if (::ioctl(socket.native_handle(), SIOCOUTQ, &unacked) != 0) return 0;
  return unacked;
}

bool IsLoopback(const tcp::socket& socket) {
  beast::error_code ec;
  const asio::ip::address peer = socket.remote_endpoint(ec).address();
  if (ec) return false;
  if (peer.is_v6() && peer.to_v6().is_v4_mapped()) {
    return asio::ip::make_address_v4(asio::ip::v4_mapped, peer.to_v6()).is_loopback();
  }
  return peer.is_loopback();
}

// Asio writes with MSG_NOSIGNAL, but the process's HTTP clients (cpp-httplib, in kubeclient) do not: a peer
// that hangs up mid-write raises SIGPIPE, whose default action kills the process. Every process that serves
// has it ignored.
void IgnoreSigpipe() {
  static std::once_flag once;
  std::call_once(once, [] { ::signal(SIGPIPE, SIG_IGN); });
}

// What a connection does with the stream it was accepted with.
class ConnectionBase {
 public:
  virtual ~ConnectionBase() = default;
  virtual void Start() = 0;
  // From any thread. Not forced: closes the connection unless a request is being handled or answered (that
  // one finishes and the connection closes after it). Forced: closes it now.
  virtual void Shut(bool force) = 0;
  // From any thread: closes the connection to make room for a new one if it still waits for its next
  // request; if it has begun one meanwhile, the server looks for room again.
  virtual void Evict() = 0;

  // When the connection began waiting for its next request (steady clock, nanoseconds), or kBusy while it
  // reads, handles or answers one. Read by the accept strand to find the longest-idle connection.
  static constexpr int64_t kBusy = 0;
  std::atomic<int64_t> idle_since{kBusy};
};

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
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
      registry.AddGauge("topofit_http_connections", "HTTP connections open now.", {"server"}),
      registry.AddCounter("topofit_http_connections_dropped_total",
                          "HTTP connections closed by the server unanswered: request-timeout (a request not "
                          "received within its deadline), idle (no request within the idle timeout), idle-evicted "
                          "(waiting for its next request when a new connection needed room at the connection "
                          "limit), tls-handshake (TLS refused, e.g. no client certificate signed by the client CA).",
                          {"server", "reason"}),
      TlsReloadsCounter(registry),
  };
}

struct HttpServer::Impl {
  explicit Impl(HttpServer& server)
      : server(server),
        options(server.options_),
        bodies(2 * (server.options_.max_body_bytes + kBodyPadding)),
        limits{server.options_.max_header_bytes, server.options_.max_header_fields, server.options_.max_body_bytes} {}

  void Accept();
  void OnAccepted(beast::error_code ec, tcp::socket socket);
  // At the connection limit with a connection waiting in the backlog: closes the longest-idle connection,
  // or, if it has not waited evict_idle_after yet, tries again when it has; if none is idle, the next
  // connection to become idle makes room. On the accept strand.
  void WaitForRoom();
  void MakeRoom();
  // A connection began waiting for its next request: makes room through it if a new connection wants some.
  void BecameIdle();
  void EvictionFailed();
  void Unregister(ConnectionBase* connection);
  // Shuts every open connection; see ConnectionBase::Shut.
  void ShutAll(bool force);
  // Waits until no connection is open or `timeout` has passed; true if none is open.
  bool WaitClosed(absl::Duration timeout);

  HttpServer& server;
  const HttpServerOptions& options;
  KeptBodies bodies;
  const RequestLimits limits;
  std::unique_ptr<ReloadingTlsContext> tls;
  std::atomic<bool> stopping{false};
  std::atomic<int> blocking_admitted{0};  // blocking requests running or waiting for a thread

  std::mutex mu;
  std::condition_variable closed;
  std::map<ConnectionBase*, std::weak_ptr<ConnectionBase>> connections;  // guarded by mu
  bool accept_paused = false;                                             // guarded by mu
  bool evicting = false;  // a connection was told to close for room and has not closed yet; guarded by mu
  bool waiting_for_room = false;  // a wait for a connection in the backlog is pending; on the accept strand
  std::atomic<bool> room_wanted{false};  // no connection was idle when one waited in the backlog

  // Declared after everything the connections use: destroying the io_context destroys the connections
  // its pending handlers still hold.
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  asio::strand<asio::io_context::executor_type> accept_strand{io.get_executor()};
  tcp::acceptor acceptor{accept_strand};
  asio::steady_timer accept_retry{accept_strand};
  asio::steady_timer room_retry{accept_strand};
  std::optional<asio::thread_pool> blocking;
  std::vector<std::thread> threads;
};

// One accepted connection: reads requests one after another, each within its deadline, and answers them.
// Every step runs on the connection's strand; between steps, the connection holds no thread.
template <typename Stream>
class Connection : public ConnectionBase, public std::enable_shared_from_this<Connection<Stream>> {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, beast::tcp_stream>;

  Connection(HttpServer::Impl& impl, tcp::socket socket)
      : impl_(impl),
        from_loopback_(IsLoopback(socket)),
        tls_(kTls ? impl.tls->Current() : nullptr),
        stream_(MakeStream(tls_.get(), std::move(socket))) {}
  ~Connection() override { impl_.Unregister(this); }

  void Start() override {
    // On the connection's strand from the first step, so that Shut() is never concurrent with it.
    asio::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
      if constexpr (kTls) {
        if (self->impl_.stopping) return self->Close();
        self->Lowest().expires_after(absl::ToChronoNanoseconds(self->impl_.options.request_timeout));
        self->stream_.async_handshake(asio::ssl::stream_base::server, [self](beast::error_code ec) {
          if (ec) {
            // With a client CA, a caller without a certificate signed by it ends here: counted and said.
            self->impl_.server.metrics_.dropped.Inc({self->Name(), "tls-handshake"});
            spdlog::warn("{}: TLS handshake refused: {}", self->Name(), ec.message());
            return self->Close();
          }
          self->ReadNext();
        });
      } else {
        self->ReadNext();
      }
    });
  }

  void Shut(bool force) override {
    asio::post(stream_.get_executor(), [self = this->shared_from_this(), force] {
      if (force || self->phase_ == Phase::kIdle || self->phase_ == Phase::kReading) self->Close();
    });
  }

  void Evict() override {
    asio::post(stream_.get_executor(), [self = this->shared_from_this()] {
      if (self->phase_ != Phase::kIdle || self->idle_since == kBusy) {
        return asio::post(self->impl_.accept_strand, [&impl = self->impl_] {
          impl.EvictionFailed();
          impl.MakeRoom();
        });
      }
      self->impl_.server.metrics_.dropped.Inc({self->Name(), "idle-evicted"});
      self->Close();
    });
  }

 private:
  enum class Phase { kIdle, kReading, kHandling, kWriting, kClosing };

  static Stream MakeStream(asio::ssl::context* tls, tcp::socket socket) {
    if constexpr (kTls) {
      return Stream(beast::tcp_stream(std::move(socket)), *tls);
    } else {
      return Stream(std::move(socket));
    }
  }

  beast::tcp_stream& Lowest() { return beast::get_lowest_layer(stream_); }
  const std::string& Name() const { return impl_.options.name; }

  // Waits for the next request's first bytes for up to the idle timeout.
  void ReadNext() {
    if (impl_.stopping) return Close();
    phase_ = Phase::kIdle;
    if (buffer_.size() > 0) return ReadHeader();  // pipelined
    Lowest().expires_after(absl::ToChronoNanoseconds(impl_.options.idle_timeout));
    idle_since = SteadyNanos();
    impl_.BecameIdle();
    stream_.async_read_some(buffer_.prepare(kFirstReadBytes),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              self->idle_since = kBusy;
                              if (ec == beast::error::timeout) self->impl_.server.metrics_.dropped.Inc({self->Name(), "idle"});
                              if (ec) return self->Close();
                              self->buffer_.commit(n);
                              self->ReadHeader();
                            });
  }

  // The request has begun: all of it must arrive by its deadline.
  void ReadHeader() {
    phase_ = Phase::kReading;
    Lowest().expires_after(absl::ToChronoNanoseconds(impl_.options.request_timeout));
    request_ = std::make_shared<HttpRequest>();
    request_->from_loopback = from_loopback_;
    request_->body = impl_.bodies.Take();
    parser_.emplace(impl_.limits, *request_);
    http::async_read_header(stream_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->ReadFailed(ec);
      if (!self->parser_->expects_continue() || self->parser_->is_done()) return self->ReadBody();
      asio::async_write(self->stream_, asio::buffer(kContinue.data(), kContinue.size()),
                        [self](beast::error_code ec, size_t) {
                          if (ec) return self->Close();
                          self->ReadBody();
                        });
    });
  }

  void ReadBody() {
    if (parser_->is_done()) return Dispatch();
    if (const boost::optional<std::uint64_t> remaining = parser_->content_length_remaining();
        remaining && !parser_->chunked()) {
      return ReadBodyDirect(static_cast<size_t>(*remaining));
    }
    // Chunked: through the parser, which counts each chunk against the limit.
    http::async_read(stream_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      if (ec) return self->ReadFailed(ec);
      self->Dispatch();
    });
  }

  // The rest of a Content-Length body (already checked against the limit, its buffer reserved) read straight
  // into the request's body, in reads as large as the socket allows: the parser's way copies every byte
  // through its buffer in 64 KiB reads, which doubled the server's CPU for a 900 KiB filter body.
  void ReadBodyDirect(size_t remaining) {
    std::string& body = request_->body;
    const size_t buffered = std::min(buffer_.size(), remaining);  // read with the header
    body.append(static_cast<const char*>(buffer_.data().data()), buffered);
    buffer_.consume(buffered);
    remaining -= buffered;
    if (remaining == 0) return Dispatch();
    const size_t at = body.size();
    body.resize(at + remaining);  // within the reserved capacity
    asio::async_read(stream_, asio::buffer(body.data() + at, remaining),
                     [self = this->shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->ReadFailed(ec);
                       self->Dispatch();
                     });
  }

  void ReadFailed(const beast::error_code& ec) {
    if (ec == beast::error::timeout) {
      // The client is too slow (or stalled on purpose): the socket is closed already.
      impl_.server.metrics_.dropped.Inc({Name(), "request-timeout"});
      return Close();
    }
    const std::string label = RouteLabel();
    switch (RefusalFor(ec)) {
      case RequestRefusal::kHeaderTooLarge:
        return Refuse(label, JsonError(431, absl::StrCat("request header larger than ", impl_.options.max_header_bytes,
                                                         " bytes or ", impl_.options.max_header_fields, " fields")));
      case RequestRefusal::kBodyTooLarge:
        return Refuse(label, JsonError(413, absl::StrCat("request body larger than ", impl_.options.max_body_bytes,
                                                         " bytes")));
      case RequestRefusal::kMalformed:
        // The client went away (before or during its request), or the server is stopping: nothing to answer.
        if (ec == http::error::end_of_stream || ec == http::error::partial_message || ec == asio::error::eof ||
            ec == asio::error::operation_aborted || ec == asio::error::connection_reset ||
            ec == asio::error::bad_descriptor || ec == asio::ssl::error::stream_truncated) {
          return Close();
        }
        return Refuse(label, JsonError(400, absl::StrCat("malformed request: ", ec.message())));
      case RequestRefusal::kNone:
        break;
    }
    Close();
  }

  // The route label of the request being read, once its request line is known.
  std::string RouteLabel() const {
    if (request_ == nullptr || request_->path.empty()) return "unmatched";
    const HttpServer::Route* route = impl_.server.Match(request_->path);
    return route != nullptr ? route->pattern : "unmatched";
  }

  // Answers an unreadable request and closes the connection.
  void Refuse(const std::string& label, HttpResponse out) {
    impl_.server.metrics_.requests.Inc({Name(), label, std::to_string(out.status)});
    Respond(std::move(out), /*close=*/true);
  }

  void Dispatch() {
    Lowest().expires_never();
    phase_ = Phase::kHandling;
    const HttpServer::Route* route = impl_.server.Match(request_->path);
    const std::string label = route != nullptr ? route->pattern : "unmatched";
    if (route == nullptr) return Finish(label, {}, JsonError(404, absl::StrCat("no route for ", request_->path)));
    const std::string method = request_->method == "HEAD" ? "GET" : request_->method;
    auto it = route->handlers.find(method);
    if (it == route->handlers.end()) {
      std::vector<std::string> allowed;
      for (const auto& [m, h] : route->handlers) allowed.push_back(m);
      allow_ = absl::StrJoin(allowed, ", ");
      return Finish(label, {}, JsonError(405, absl::StrCat("method ", request_->method, " not allowed on ", route->pattern,
                                                           "; allowed: ", allow_)));
    }
    if (route->prefix) request_->path_suffix = request_->path.substr(route->match.size());
    const auto start = std::chrono::steady_clock::now();  // a duration, so monotonic time, not the Clock
    impl_.server.metrics_.in_flight.Add(1, {Name()});
    const HttpServer::Handler& handler = it->second;
    if (!handler.blocking) return Finish(label, start, RunHandler(handler.handle, *request_));

    const int admitted_limit = impl_.options.blocking_threads + impl_.options.blocking_queue;
    if (impl_.blocking_admitted.fetch_add(1) >= admitted_limit) {
      impl_.blocking_admitted.fetch_sub(1);
      return Finish(label, start,
                    JsonError(503, absl::StrCat("server busy: ", admitted_limit, " requests to ", route->pattern,
                                                " and the like in progress; retry later")));
    }
    asio::post(*impl_.blocking, [self = this->shared_from_this(), &handler, label, start] {
      HttpResponse out = RunHandler(handler.handle, *self->request_);
      self->impl_.blocking_admitted.fetch_sub(1);
      asio::post(self->stream_.get_executor(), [self, label, start, out = std::move(out)]() mutable {
        self->Finish(label, start, std::move(out));
      });
    });
  }

  // Counts a routed request's answer and writes it.
  void Finish(const std::string& label, std::optional<std::chrono::steady_clock::time_point> start,
              HttpResponse out) {
    HttpMetrics& metrics = impl_.server.metrics_;
    if (start) {
      metrics.latency.Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - *start).count(),
                              {Name(), label});
      metrics.in_flight.Add(-1, {Name()});
    } else {
      metrics.latency.Observe(0, {Name(), label});
    }
    metrics.requests.Inc({Name(), label, std::to_string(out.status)});
    Respond(std::move(out), /*close=*/false);
  }

  // Writes `out`: its body with `spliced` at splice_at, each piece as it lies, in one gathered write. The
  // request, whose body the pieces may view, is kept until then.
  void Respond(HttpResponse out, bool close) {
    phase_ = Phase::kWriting;
    keep_alive_ = !close && !impl_.stopping && parser_ && parser_->is_header_done() && parser_->keep_alive();
    response_ = std::move(out);
    const absl::string_view text = response_.body;
    const size_t at = std::min(response_.splice_at, text.size());
    size_t length = text.size();
    for (absl::string_view piece : response_.spliced) length += piece.size();
    head_ = ResponseHead(response_, length, keep_alive_, allow_);
    pieces_.clear();
    pieces_.emplace_back(head_.data(), head_.size());
    if (request_ == nullptr || request_->method != "HEAD") {
      pieces_.emplace_back(text.data(), at);
      for (absl::string_view piece : response_.spliced) pieces_.emplace_back(piece.data(), piece.size());
      pieces_.emplace_back(text.data() + at, text.size() - at);
    }
    Lowest().expires_after(absl::ToChronoNanoseconds(impl_.options.write_timeout));
    asio::async_write(stream_, pieces_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
      self->Lowest().expires_never();
      self->Reset();
      if (ec) return self->Close();
      if (!self->keep_alive_) return self->LingeringClose();
      self->ReadNext();
    });
  }

  // Done with the request: its body buffer goes back to the kept ones.
  void Reset() {
    if (request_ != nullptr) impl_.bodies.Keep(std::move(request_->body));
    request_.reset();
    parser_.reset();
    response_ = HttpResponse();
    allow_.clear();
    pieces_.clear();
    head_.clear();
  }

  // Ends the connection after a response, without reading what the client may still be sending (the rest of
  // a refused body): FIN, then discard input until the response is acknowledged, the client closes, or
  // kLinger passes.
  void LingeringClose() {
    phase_ = Phase::kClosing;
    beast::error_code ignored;
    Lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    Lowest().expires_after(kLinger);
    Discard();
  }

  void Discard() {
    if (!Lowest().socket().is_open() || Unacknowledged(Lowest().socket()) == 0) return Close();
    buffer_.clear();
    Lowest().async_read_some(buffer_.prepare(kLingerReadBytes), [self = this->shared_from_this()](beast::error_code ec,
                                                                                                   size_t) {
      if (ec) return self->Close();
      self->Discard();
    });
  }

  void Close() {
    phase_ = Phase::kClosing;
    idle_since = kBusy;
    Lowest().close();
  }

  HttpServer::Impl& impl_;
  const bool from_loopback_;
  const std::shared_ptr<asio::ssl::context> tls_;  // the TLS context current when accepted; outlives stream_
  Stream stream_;
  beast::flat_buffer buffer_;
  Phase phase_ = Phase::kIdle;
  // The request being read or answered; shared with a blocking handler's thread.
  std::shared_ptr<HttpRequest> request_;
  std::optional<RequestParser> parser_;
  HttpResponse response_;
  std::string allow_;  // the Allow header of a 405
  std::string head_;
  std::vector<asio::const_buffer> pieces_;
  bool keep_alive_ = false;
};

void HttpServer::Impl::Accept() {
  acceptor.async_accept(asio::make_strand(io), [this](beast::error_code ec, tcp::socket socket) {
    OnAccepted(ec, std::move(socket));
  });
}

void HttpServer::Impl::OnAccepted(beast::error_code ec, tcp::socket socket) {
  if (ec == asio::error::operation_aborted || stopping) return;
  if (ec) {
    // Out of file descriptors, most likely: the connection waits in the backlog; try again shortly.
    spdlog::warn("{}: accept failed: {}", options.name, ec.message());
    accept_retry.expires_after(std::chrono::milliseconds(100));
    accept_retry.async_wait([this](beast::error_code wait) {
      if (!wait && !stopping) Accept();
    });
    return;
  }
  // Replies are written in pieces; with Nagle's algorithm on, the last piece waits for the client's delayed
  // ACK (about 40 ms per request, measured with bench/extender_bench).
  socket.set_option(tcp::no_delay(true), ec);
  std::shared_ptr<ConnectionBase> connection;
  if (tls != nullptr) {
    connection = std::make_shared<Connection<beast::ssl_stream<beast::tcp_stream>>>(*this, std::move(socket));
  } else {
    connection = std::make_shared<Connection<beast::tcp_stream>>(*this, std::move(socket));
  }
  bool more = true;
  {
    std::lock_guard<std::mutex> lock(mu);
    connections.emplace(connection.get(), connection);
    // The gauge moves under the lock that guards the set, so it never reads one over the limit while a closing
    // connection's place is already taken by the next.
    server.metrics_.connections.Add(1, {options.name});
    if (connections.size() >= static_cast<size_t>(options.max_connections)) {
      accept_paused = true;  // the kernel queues further connections in the listen backlog
      more = false;
    }
  }
  connection->Start();
  if (more) {
    Accept();
  } else {
    WaitForRoom();
  }
}

void HttpServer::Impl::WaitForRoom() {
  if (waiting_for_room) return;
  waiting_for_room = true;
  acceptor.async_wait(tcp::acceptor::wait_read, [this](beast::error_code ec) {
    waiting_for_room = false;
    if (!ec && !stopping) MakeRoom();
  });
}

void HttpServer::Impl::MakeRoom() {
  if (stopping) return;
  std::shared_ptr<ConnectionBase> longest_idle;
  int64_t longest_since = 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    // Accepting again already (a connection closed), or about to: the waiting connection takes its place.
    if (!accept_paused || evicting) return;
    for (const auto& [raw, weak] : connections) {
      const int64_t since = raw->idle_since;
      if (since == ConnectionBase::kBusy || (longest_idle != nullptr && since >= longest_since)) continue;
      if (auto c = weak.lock()) {
        longest_idle = std::move(c);
        longest_since = since;
      }
    }
  }
  if (longest_idle == nullptr) {
    room_wanted = true;
    return;
  }
  const int64_t evictable_at = longest_since + absl::ToInt64Nanoseconds(options.evict_idle_after);
  const int64_t now = SteadyNanos();
  if (now < evictable_at) {
    room_retry.expires_after(std::chrono::nanoseconds(evictable_at - now));
    room_retry.async_wait([this](beast::error_code ec) {
      if (!ec) MakeRoom();
    });
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    evicting = true;
  }
  longest_idle->Evict();
}

void HttpServer::Impl::EvictionFailed() {
  std::lock_guard<std::mutex> lock(mu);
  evicting = false;
}

void HttpServer::Impl::BecameIdle() {
  if (room_wanted.exchange(false)) asio::post(accept_strand, [this] { MakeRoom(); });
}

void HttpServer::Impl::Unregister(ConnectionBase* connection) {
  bool resume = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    connections.erase(connection);
    server.metrics_.connections.Add(-1, {options.name});
    evicting = false;
    if (accept_paused && !stopping) {
      accept_paused = false;
      resume = true;
    }
    closed.notify_all();
  }
  if (resume) asio::post(accept_strand, [this] { Accept(); });
}

void HttpServer::Impl::ShutAll(bool force) {
  std::vector<std::shared_ptr<ConnectionBase>> open;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& [raw, weak] : connections) {
      if (auto c = weak.lock()) open.push_back(std::move(c));
    }
  }
  for (const auto& c : open) c->Shut(force);
}

bool HttpServer::Impl::WaitClosed(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu);
  return closed.wait_for(lock, absl::ToChronoNanoseconds(timeout), [&] { return connections.empty(); });
}

HttpServer::HttpServer(const HttpServerOptions& options, MetricsRegistry& registry)
    : options_(options), metrics_(HttpMetrics::Create(registry)), impl_(std::make_unique<Impl>(*this)) {}

HttpServer::~HttpServer() { Stop(); }

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(const HttpServerOptions& options,
                                                               MetricsRegistry& registry) {
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("port ", options.port, " out of range"));
  }
  if (options.max_body_bytes == 0) return absl::InvalidArgumentError("max_body_bytes must be positive");
  if (options.max_header_bytes == 0 || options.max_header_fields == 0) {
    return absl::InvalidArgumentError("max_header_bytes and max_header_fields must be positive");
  }
  if (options.threads < 1 || options.blocking_threads < 1) {
    return absl::InvalidArgumentError("threads and blocking_threads must be at least 1");
  }
  if (options.blocking_queue < 0 || options.max_connections < 1 || options.listen_backlog < 1) {
    return absl::InvalidArgumentError("blocking_queue, max_connections and listen_backlog must be positive");
  }
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("TLS needs both a certificate file and a key file");
  }
  if (!options.tls_client_ca_file.empty() && options.tls_cert_file.empty()) {
    return absl::InvalidArgumentError("a client CA file needs a server certificate and key");
  }
  IgnoreSigpipe();
  std::unique_ptr<HttpServer> self(new HttpServer(options, registry));
  if (!options.tls_cert_file.empty()) {
    // New connections get the new certificate; when the files do not load, the previous ones stay.
    absl::StatusOr<std::unique_ptr<ReloadingTlsContext>> tls = ReloadingTlsContext::Create(
        {options.tls_cert_file, options.tls_key_file, options.tls_client_ca_file}, options.tls_reload_interval,
        ReportTlsReloads(self->metrics_.tls_reloads, self->name()));
    if (!tls.ok()) return tls.status();
    self->impl_->tls = *std::move(tls);
  }
  return self;
}

void HttpServer::Handle(const std::string& method, const std::string& path, HttpHandler handler,
                        RouteOptions options) {
  const bool prefix = absl::EndsWith(path, "/*");
  auto it = std::find_if(routes_.begin(), routes_.end(), [&](const Route& r) { return r.pattern == path; });
  if (it == routes_.end()) {
    // "/explain/*" matches paths starting with "/explain/".
    routes_.push_back(Route{path, prefix ? path.substr(0, path.size() - 1) : path, prefix, {}});
    it = routes_.end() - 1;
  }
  it->handlers[absl::AsciiStrToUpper(method)] = Handler{std::move(handler), options.blocking};
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
  Impl& impl = *impl_;
  const auto failed = [&](const beast::error_code& ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", options_.address, ":", options_.port, ": ", ec.message()));
  };
  beast::error_code ec;
  const asio::ip::address address = asio::ip::make_address(options_.address, ec);
  if (ec) return failed(ec);
  const tcp::endpoint endpoint(address, static_cast<uint16_t>(options_.port));
  // SO_REUSEADDR only (restart while old connections sit in TIME_WAIT); never SO_REUSEPORT, which would let
  // a second process bind our port and take a share of its connections.
  impl.acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl.acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl.acceptor.bind(endpoint, ec);
  if (!ec) impl.acceptor.listen(options_.listen_backlog, ec);
  if (ec) {
    beast::error_code ignored;
    impl.acceptor.close(ignored);
    return failed(ec);
  }
  const int port = impl.acceptor.local_endpoint(ec).port();
  started_ = true;
  impl.work.emplace(impl.io.get_executor());
  impl.blocking.emplace(static_cast<size_t>(options_.blocking_threads));
  asio::post(impl.accept_strand, [&impl] { impl.Accept(); });
  for (int i = 0; i < options_.threads; ++i) {
    impl.threads.emplace_back([&impl] {
      for (;;) {
        try {
          impl.io.run();
          return;
        } catch (const std::exception& e) {  // e.g. bad_alloc in a handler's completion: keep serving
          spdlog::error("{}: HTTP I/O thread: {}", impl.options.name, e.what());
        }
      }
    });
  }
  return port;
}

void HttpServer::Stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  Impl& impl = *impl_;
  impl.stopping = true;
  asio::post(impl.accept_strand, [&impl] {
    beast::error_code ignored;
    impl.acceptor.close(ignored);
    impl.accept_retry.cancel();
    impl.room_retry.cancel();
  });
  // Idle connections and requests still arriving close now; responses in flight get drain_timeout.
  impl.ShutAll(/*force=*/false);
  if (!impl.WaitClosed(options_.drain_timeout)) {
    impl.ShutAll(/*force=*/true);
    impl.WaitClosed(absl::Seconds(1));
  }
  // Handlers still running are waited for (they cannot be interrupted); their responses are not written.
  impl.work.reset();
  impl.io.stop();
  for (std::thread& t : impl.threads) t.join();
  impl.blocking->join();
}

}  // namespace topofit::server
