#include "server/http_server.h"

#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

#include <httplib.h>
#include <openssl/ssl.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/ops_endpoints.h"
#include "tests/server/mounted_secret.h"
#include "tests/server/test_certs.h"

namespace topofit::server {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxBody = 1 << 20;             // 1 MiB limit in these tests
constexpr size_t kHugeBody = size_t{100} << 20;  // 100 MiB offered by a client

// A started server with a few routes, on a free loopback port.
struct TestServer {
  MetricsRegistry registry;
  std::unique_ptr<HttpServer> server;
  int port = 0;

  explicit TestServer(HttpServerOptions options = {}) {
    options.address = "127.0.0.1";
    options.name = "test";
    options.max_body_bytes = kMaxBody;
    auto created = HttpServer::Create(options, registry);
    REQUIRE(created.ok());
    server = std::move(*created);
    server->Handle("GET", "/hello", [](const HttpRequest&) { return HttpResponse{200, "text/plain", "hello"}; });
    server->Handle("POST", "/echo", [](const HttpRequest& r) {
      return JsonResponse(200, {{"bytes", r.body.size()}, {"type", r.Header("content-type")}});
    });
    server->Handle("GET", "/explain/*", [](const HttpRequest& r) {
      return JsonResponse(200, {{"suffix", r.path_suffix}, {"q", r.query.count("v") ? r.query.find("v")->second : ""}});
    });
    server->Handle("GET", "/throw", [](const HttpRequest&) -> HttpResponse { throw std::runtime_error("boom"); });
    // "<" + the body's first half + "|" + its second half + ">", the halves spliced in where they lie.
    server->Handle("POST", "/splice", [](const HttpRequest& r) {
      const absl::string_view body = r.body;
      HttpResponse out{200, "application/octet-stream", "<>"};
      out.splice_at = 1;
      out.spliced = {body.substr(0, body.size() / 2), "|", body.substr(body.size() / 2)};
      return out;
    });
  }

  void Start() {
    auto p = server->Start();
    REQUIRE(p.ok());
    port = *p;
  }

  httplib::Client Client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_connection_timeout(2);
    c.set_read_timeout(5);
    return c;
  }

  double Requests(const std::string& route, int code) const {
    return server->metrics().requests.Value({"test", route, std::to_string(code)});
  }
};

// Waits up to 2 s for `done`: the server counts a dropped connection just after the client sees it close.
template <typename Predicate>
bool Eventually(Predicate done) {
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  while (!done() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return done();
}

std::string JsonErrorOf(const httplib::Result& res) { return nlohmann::json::parse(res->body).at("error"); }

TEST_CASE("Routes answer, unknown path is 404 JSON, wrong method 405 JSON", "[http]") {
  TestServer t;
  t.Start();
  auto cli = t.Client();

  auto hello = cli.Get("/hello");
  REQUIRE(hello);
  CHECK(hello->status == 200);
  CHECK(hello->body == "hello");

  auto echo = cli.Post("/echo", std::string(1000, 'x'), "application/json");
  REQUIRE(echo);
  CHECK(echo->status == 200);
  CHECK(nlohmann::json::parse(echo->body) == nlohmann::json{{"bytes", 1000}, {"type", "application/json"}});

  auto missing = cli.Get("/nope");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(missing->get_header_value("Content-Type") == "application/json");
  CHECK(JsonErrorOf(missing) == "no route for /nope");

  auto wrong = cli.Post("/hello", "{}", "application/json");
  REQUIRE(wrong);
  CHECK(wrong->status == 405);
  CHECK(wrong->get_header_value("Allow") == "GET");
  CHECK(absl::StrContains(JsonErrorOf(wrong), "not allowed"));

  auto head = cli.Head("/hello");
  REQUIRE(head);
  CHECK(head->status == 200);

  auto prefix = cli.Get("/explain/ns/pod-1?v=2");
  REQUIRE(prefix);
  CHECK(nlohmann::json::parse(prefix->body) == nlohmann::json{{"suffix", "ns/pod-1"}, {"q", "2"}});

  CHECK(t.Requests("/hello", 200) == 2);  // GET and HEAD
  CHECK(t.Requests("/echo", 200) == 1);
  CHECK(t.Requests("unmatched", 404) == 1);
  CHECK(t.Requests("/hello", 405) == 1);
  CHECK(t.Requests("/explain/*", 200) == 1);
}

TEST_CASE("A throwing handler gets 500 JSON and the server keeps serving", "[http]") {
  TestServer t;
  t.Start();
  auto cli = t.Client();
  auto res = cli.Get("/throw");
  REQUIRE(res);
  CHECK(res->status == 500);
  CHECK(JsonErrorOf(res) == "internal error: boom");
  auto next = cli.Get("/hello");
  REQUIRE(next);
  CHECK(next->status == 200);
  CHECK(t.Requests("/throw", 500) == 1);
}

TEST_CASE("Latency is recorded per route", "[http]") {
  TestServer t;
  t.Start();
  auto cli = t.Client();
  for (int i = 0; i < 3; ++i) REQUIRE(cli.Get("/hello"));
  const std::string text = t.registry.Render();
  CHECK(absl::StrContains(text, "topofit_http_request_duration_seconds_count{server=\"test\",route=\"/hello\"} 3\n"));
  CHECK(absl::StrContains(text, "topofit_http_requests_total{server=\"test\",route=\"/hello\",code=\"200\"} 3\n"));
  CHECK(absl::StrContains(text, "topofit_http_requests_in_flight{server=\"test\"} 0\n"));
}

// --- Body limit -------------------------------------------------------------------------------------

long MaxRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

struct RawExchange {
  std::string response;    // everything the server sent
  size_t body_bytes_sent = 0;
  bool server_closed = false;  // EOF or reset seen
};

// Offers `body_bytes` of body after `head`, generated as it goes, while reading whatever the server answers,
// as an HTTP client that reads during its upload (Go's) does. Stops when the server closes the connection.
RawExchange OfferBody(int port, const std::string& head, size_t body_bytes, bool chunked) {
  RawExchange ex;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::send(fd, head.data(), head.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(head.size()));

  const std::string piece(64 << 10, 'x');
  const std::string chunk = absl::StrCat(absl::Hex(piece.size()), "\r\n", piece, "\r\n");
  std::string pending;  // the unsent rest of the current piece
  bool sending = true;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (Clock::now() < deadline) {
    if (sending && pending.empty()) {
      if (ex.body_bytes_sent >= body_bytes) {
        if (chunked) pending = "0\r\n\r\n";
        sending = !pending.empty();
      } else {
        pending = chunked ? chunk : piece;
        ex.body_bytes_sent += piece.size();
      }
    }
    pollfd p{fd, static_cast<short>(POLLIN | (sending ? POLLOUT : 0)), 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[4096];
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        ex.server_closed = true;
        break;
      }
      ex.response.append(buf, static_cast<size_t>(n));
    }
    if (sending && (p.revents & POLLOUT)) {
      const ssize_t n = ::send(fd, pending.data(), pending.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN) {
        sending = false;  // reset by the server; keep reading what it answered
      } else if (n > 0) {
        pending.erase(0, static_cast<size_t>(n));
      }
    }
  }
  ::close(fd);
  return ex;
}

std::string PostHead(const std::string& framing) {
  return absl::StrCat("POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n", framing,
                      "\r\n");
}

void CheckPayloadTooLarge(const RawExchange& ex) {
  CHECK(absl::StartsWith(ex.response, "HTTP/1.1 413 "));
  CHECK(absl::StrContains(ex.response, "Connection: close"));
  CHECK(absl::StrContains(ex.response, "{\"error\":\"request body larger than 1048576 bytes\"}"));
  CHECK(ex.server_closed);
  // The server stopped taking the body: what got out is bounded by socket buffers, not the 100 MiB.
  CHECK(ex.body_bytes_sent < kHugeBody / 4);
}

TEST_CASE("An over-limit Content-Length gets 413 before the body is read, then the server serves on", "[http]") {
  TestServer t;
  t.Start();
  const long rss_before = MaxRssKb();
  const RawExchange ex = OfferBody(t.port, PostHead(absl::StrCat("Content-Length: ", kHugeBody, "\r\n")), kHugeBody,
                                   /*chunked=*/false);
  CheckPayloadTooLarge(ex);
  CHECK(MaxRssKb() - rss_before < 50 * 1024);  // nowhere near 100 MiB buffered
  auto next = t.Client().Get("/hello");
  REQUIRE(next);
  CHECK(next->status == 200);
  CHECK(t.Requests("/echo", 413) == 1);
}

TEST_CASE("An over-limit chunked body gets 413 once the limit is crossed", "[http]") {
  TestServer t;
  t.Start();
  const long rss_before = MaxRssKb();
  const RawExchange ex = OfferBody(t.port, PostHead("Transfer-Encoding: chunked\r\n"), kHugeBody, /*chunked=*/true);
  CheckPayloadTooLarge(ex);
  CHECK(MaxRssKb() - rss_before < 50 * 1024);
  auto next = t.Client().Get("/hello");
  REQUIRE(next);
  CHECK(next->status == 200);
}

TEST_CASE("A chunked body under the limit is read whole", "[http]") {
  TestServer t;
  t.Start();
  const RawExchange ex = OfferBody(t.port, PostHead("Transfer-Encoding: chunked\r\nConnection: close\r\n"),
                                   4 * (64 << 10), /*chunked=*/true);
  CHECK(absl::StartsWith(ex.response, "HTTP/1.1 200 "));
  CHECK(absl::StrContains(ex.response, "{\"bytes\":262144,"));
}

TEST_CASE("httplib's client uploading 100 MiB lazily: refused without buffering, server serves on", "[http]") {
  TestServer t;
  t.Start();
  auto cli = t.Client();
  std::atomic<size_t> offered{0};
  const std::string piece(64 << 10, 'x');
  const long rss_before = MaxRssKb();
  const auto start = Clock::now();
  auto res = cli.Post(
      "/echo", kHugeBody,
      [&](size_t offset, size_t length, httplib::DataSink& sink) {
        const size_t n = std::min(length, piece.size());
        offered = offset + n;
        return sink.write(piece.data(), n);
      },
      "application/json");
  // httplib's client writes the whole body before it reads, so the server's early 413 usually reaches it
  // as a failed write. Either outcome is fine; hanging, crashing or buffering the body is not.
  // (Canceled: the content provider's write to the closed socket failed.)
  if (res) {
    CHECK(res->status == 413);
  } else {
    CHECK((res.error() == httplib::Error::Write || res.error() == httplib::Error::Canceled));
  }
  CHECK(offered.load() < kHugeBody);
  CHECK(Clock::now() - start < std::chrono::seconds(5));
  CHECK(MaxRssKb() - rss_before < 50 * 1024);
  auto next = t.Client().Get("/hello");
  REQUIRE(next);
  CHECK(next->status == 200);
}

TEST_CASE("Bodies of every size are read whole and spliced replies written as they lie, on one connection",
          "[http]") {
  TestServer t;
  t.Start();
  auto cli = t.Client();
  std::mt19937 rng(7);
  // Around the size from which plain-HTTP bodies are read from the socket directly (256 KiB), up to the limit;
  // the same connection throughout, so each read must leave it at the next request.
  for (size_t size : {size_t{0}, size_t{1}, size_t{4000}, size_t{5000}, size_t{(256 << 10) - 1}, size_t{256 << 10},
                      size_t{(256 << 10) + 1}, size_t{700001}, kMaxBody, size_t{4000}}) {
    CAPTURE(size);
    std::string body(size, '\0');
    for (char& c : body) c = static_cast<char>('a' + rng() % 26);
    auto res = cli.Post("/splice", body, "application/octet-stream");
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(res->get_header_value("Content-Length") == std::to_string(size + 3));
    CHECK(res->body == absl::StrCat("<", body.substr(0, size / 2), "|", body.substr(size / 2), ">"));
    auto echo = cli.Post("/echo", body, "application/json");
    REQUIRE(echo);
    CHECK(nlohmann::json::parse(echo->body)["bytes"] == size);
  }
  CHECK(t.Requests("/splice", 200) == 10);
}

TEST_CASE("A body cut short is dropped at the request's deadline, then the server serves on", "[http]") {
  HttpServerOptions options;
  options.request_timeout = absl::Milliseconds(300);
  TestServer t(options);
  t.Start();
  const RawExchange ex = OfferBody(t.port, PostHead("Content-Length: 900000\r\n"), 5 * (64 << 10), /*chunked=*/false);
  CHECK(ex.response.empty());
  CHECK(ex.server_closed);
  CHECK(Eventually([&] { return t.server->metrics().dropped.Value({"test", "request-timeout"}) == 1; }));
  auto next = t.Client().Get("/hello");
  REQUIRE(next);
  CHECK(next->status == 200);
}

// --- Lifecycle --------------------------------------------------------------------------------------

TEST_CASE("Start fails cleanly when the port is taken", "[http]") {
  TestServer first;
  first.Start();
  MetricsRegistry registry;
  HttpServerOptions options;
  options.address = "127.0.0.1";
  options.port = first.port;
  auto second = HttpServer::Create(options, registry);
  REQUIRE(second.ok());
  auto started = (*second)->Start();
  REQUIRE(!started.ok());
  CHECK(absl::StrContains(started.status().message(), absl::StrCat(":", first.port)));
}

// A gate that handlers wait at until the test opens it.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool WaitOpen(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

// GET /slow: answers "done" once the test opens `release`.
class SlowRoute {
 public:
  explicit SlowRoute(TestServer& t) {
    t.server->Handle("GET", "/slow", [this](const HttpRequest&) {
      entered_.set_value();
      release.WaitOpen(std::chrono::seconds(10));
      return HttpResponse{200, "text/plain", "done"};
    });
  }
  // Whether a request has reached the handler within a few seconds.
  bool WaitEntered() { return entered_.get_future().wait_for(std::chrono::seconds(10)) == std::future_status::ready; }

  Gate release;

 private:
  std::promise<void> entered_;
};

TEST_CASE("Stop lets a request in flight finish, then refuses connections", "[http]") {
  TestServer t;
  SlowRoute slow(t);
  t.Start();

  auto in_flight = std::async(std::launch::async, [&] { return t.Client().Get("/slow"); });
  REQUIRE(slow.WaitEntered());
  auto stopping = std::async(std::launch::async, [&] { t.server->Stop(); });
  // Stop waits for the handler.
  CHECK(stopping.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout);
  slow.release.Open();
  REQUIRE(stopping.wait_for(std::chrono::seconds(5)) == std::future_status::ready);

  auto res = in_flight.get();
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(res->body == "done");
  CHECK(!t.Client().Get("/hello"));
  t.server->Stop();  // idempotent
}

TEST_CASE("Requests are served concurrently", "[http]") {
  TestServer t;
  constexpr int kClients = 4;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  t.server->Handle("GET", "/rendezvous", [&](const HttpRequest&) {
    // Each handler waits until all of them are inside: only possible if they run at the same time.
    std::unique_lock<std::mutex> lock(mu);
    ++arrived;
    cv.notify_all();
    const bool all = cv.wait_for(lock, std::chrono::seconds(5), [&] { return arrived == kClients; });
    return HttpResponse{all ? 200 : 504, "text/plain", ""};
  });
  t.Start();
  std::vector<std::future<httplib::Result>> results;
  for (int i = 0; i < kClients; ++i) {
    results.push_back(std::async(std::launch::async, [&] { return t.Client().Get("/rendezvous"); }));
  }
  for (auto& r : results) {
    auto res = r.get();
    REQUIRE(res);
    CHECK(res->status == 200);
  }
}

// --- Hostile clients and heavy load (issue 15) -------------------------------------------------------

// A raw loopback connection to the server, closed with the object.
class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  }
  ~RawConnection() { ::close(fd_); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // False once the server has closed or reset the connection.
  bool Send(absl::string_view bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // Reads until the server closes the connection or `timeout` passes; sets closed() on the former.
  std::string ReadUntilClosed(std::chrono::milliseconds timeout) {
    std::string out;
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }
  // What has arrived, without waiting; sets closed() if the server has closed the connection.
  std::string ReadAvailable() {
    std::string out;
    for (;;) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 0) <= 0) return out;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
      if (n <= 0) {
        closed_ = true;
        return out;
      }
      out.append(buf, static_cast<size_t>(n));
    }
  }
  bool closed() const { return closed_; }
  int fd() const { return fd_; }

 private:
  int fd_;
  bool closed_ = false;
};

TEST_CASE("A flood of header fields gets 431 and the connection closes", "[http][hostile]") {
  TestServer t;
  t.Start();
  RawConnection c(t.port);
  // 200,000 short fields would be ~2 MB: the server must stop at its field limit (100), not buffer them.
  std::string head = "GET /hello HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 200; ++i) absl::StrAppend(&head, "X-F", i, ": v\r\n");
  c.Send(head);  // no blank line yet: the server answers before the header ends
  const std::string response = c.ReadUntilClosed(std::chrono::seconds(5));
  CHECK(absl::StartsWith(response, "HTTP/1.1 431 "));
  CHECK(absl::StrContains(response, "request header larger than 65536 bytes or 100 fields"));
  CHECK(c.closed());
  CHECK(t.Requests("/hello", 431) == 1);
  auto next = t.Client().Get("/hello");
  REQUIRE(next);
  CHECK(next->status == 200);
}

TEST_CASE("Endless header bytes get 431 once past the header limit, whatever keeps coming", "[http][hostile]") {
  HttpServerOptions options;
  options.max_header_bytes = 8 << 10;
  TestServer t(options);
  t.Start();
  RawConnection c(t.port);
  REQUIRE(c.Send("GET /hello HTTP/1.1\r\nX-Long: "));
  const std::string filler(1024, 'a');
  size_t sent = 0;
  while (sent < (8 << 20) && c.Send(filler)) sent += filler.size();  // stops when the server closes
  const std::string response = c.ReadUntilClosed(std::chrono::seconds(5));
  CHECK(absl::StartsWith(response, "HTTP/1.1 431 "));
  CHECK(c.closed());
  CHECK(sent < (8 << 20));
}

TEST_CASE("A 60 MB body is refused from its Content-Length at the default limit, unread", "[http][hostile]") {
  MetricsRegistry registry;
  HttpServerOptions options;  // max_body_bytes 8 MiB
  options.address = "127.0.0.1";
  options.name = "test";
  auto server = HttpServer::Create(options, registry);
  REQUIRE(server.ok());
  std::atomic<int> handled{0};
  (*server)->Handle("POST", "/filter", [&](const HttpRequest&) {
    ++handled;
    return HttpResponse{200, "application/json", "{}"};
  });
  auto port = (*server)->Start();
  REQUIRE(port.ok());
  const long rss_before = MaxRssKb();
  // `[[],[],...]`: the body that parsed into a DOM peaked at 1.6-1.8 GB.
  const size_t body_bytes = 60'000'000;
  const RawExchange ex =
      OfferBody(*port, absl::StrCat("POST /filter HTTP/1.1\r\nHost: x\r\nContent-Length: ", body_bytes, "\r\n\r\n"),
                body_bytes, /*chunked=*/false);
  CHECK(absl::StartsWith(ex.response, "HTTP/1.1 413 "));
  CHECK(ex.server_closed);
  CHECK(ex.body_bytes_sent < body_bytes / 4);
  CHECK(MaxRssKb() - rss_before < 20 * 1024);
  CHECK(handled == 0);
}

TEST_CASE("Slow clients trickling bytes hold no thread and are dropped at their request's deadline while still "
          "sending, a normal request is served meanwhile",
          "[http][hostile]") {
  // The deadline covers the whole request, from its first byte to its last: a client sending a byte every
  // 100 ms keeps a per-read timer from ever firing, so it must be dropped here while it is still sending.
  constexpr auto kDeadline = std::chrono::milliseconds(1000);
  constexpr auto kTrickleFor = std::chrono::milliseconds(3000);
  constexpr auto kByteEvery = std::chrono::milliseconds(100);
  HttpServerOptions options;
  options.threads = 2;
  options.request_timeout = absl::FromChrono(kDeadline);
  TestServer t(options);
  t.Start();

  // Half of them trickle the header; the other half send the header at once and trickle the body.
  const std::string header = "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n";
  constexpr int kSlow = 16;  // twice the old server's threads
  struct Slow {
    std::unique_ptr<RawConnection> connection;
    std::string rest;  // what it still has to send, a byte at a time
    Clock::time_point first_byte;
    std::optional<Clock::duration> dropped_after;  // from the first byte to the server closing
    std::string answered;
  };
  std::vector<Slow> slow(kSlow);
  for (int i = 0; i < kSlow; ++i) {
    Slow& s = slow[static_cast<size_t>(i)];
    s.connection = std::make_unique<RawConnection>(t.port);
    const bool body = i % 2 == 1;
    const std::string first = body ? header : header.substr(0, 1);
    s.rest = body ? std::string(1000, 'x') : header.substr(1) + std::string(1000, 'x');
    s.first_byte = Clock::now();
    REQUIRE(s.connection->Send(first));  // the request has begun: its deadline runs
  }

  const auto start = Clock::now();
  auto next_normal = start;
  int served = 0;
  while (Clock::now() - start < kTrickleFor) {
    for (Slow& s : slow) {
      if (s.dropped_after) continue;
      s.answered += s.connection->ReadAvailable();
      if (s.connection->closed() || !s.connection->Send(s.rest.substr(0, 1))) {
        s.dropped_after = Clock::now() - s.first_byte;
        continue;
      }
      s.rest.erase(0, 1);
    }
    if (Clock::now() >= next_normal) {
      const auto asked = Clock::now();
      auto res = t.Client().Post("/echo", "{}", "application/json");
      REQUIRE(res);
      CHECK(res->status == 200);
      CHECK(Clock::now() - asked < std::chrono::milliseconds(500));  // half its own deadline
      ++served;
      next_normal = Clock::now() + std::chrono::milliseconds(300);
    }
    std::this_thread::sleep_for(kByteEvery);
  }
  CHECK(served >= 5);
  for (const Slow& s : slow) {
    // Dropped while it was still sending (a timer reset by each read would never have fired), not before
    // its deadline, and unanswered.
    REQUIRE(s.dropped_after.has_value());
    CHECK(*s.dropped_after >= kDeadline - std::chrono::milliseconds(50));
    CHECK(*s.dropped_after < kTrickleFor - kByteEvery);
    CHECK_FALSE(s.rest.empty());
    CHECK(s.answered.empty());
  }
  CHECK(Eventually([&] { return t.server->metrics().dropped.Value({"test", "request-timeout"}) == kSlow; }));
}

TEST_CASE("Many keep-alive connections are served side by side, beyond the thread count", "[http][load]") {
  HttpServerOptions options;
  options.threads = 2;
  TestServer t(options);
  t.Start();
  constexpr int kConnections = 32;
  std::vector<std::unique_ptr<httplib::Client>> clients;
  for (int i = 0; i < kConnections; ++i) {
    clients.push_back(std::make_unique<httplib::Client>("127.0.0.1", t.port));
    clients.back()->set_keep_alive(true);
    clients.back()->set_read_timeout(5);
  }
  // Round robin: every connection stays open between its requests.
  for (int round = 0; round < 3; ++round) {
    for (auto& c : clients) {
      auto res = c->Get("/hello");
      REQUIRE(res);
      CHECK(res->status == 200);
    }
  }
  CHECK(t.Requests("/hello", 200) == 3 * kConnections);
  CHECK(t.server->metrics().connections.Value({"test"}) == kConnections);
}

TEST_CASE("Past the connection limit, connections wait in the listen backlog and are all served", "[http][load]") {
  HttpServerOptions options;
  options.max_connections = 4;
  TestServer t(options);
  std::atomic<double> most_open{0};
  t.server->Handle("GET", "/open", [&](const HttpRequest&) {
    const double open = t.server->metrics().connections.Value({"test"});
    double seen = most_open.load();
    while (open > seen && !most_open.compare_exchange_weak(seen, open)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return HttpResponse{200, "text/plain", "ok"};
  });
  t.Start();
  constexpr int kClients = 24;
  std::vector<std::future<int>> results;
  for (int i = 0; i < kClients; ++i) {
    results.push_back(std::async(std::launch::async, [&] {
      httplib::Client c("127.0.0.1", t.port);
      c.set_keep_alive(false);
      c.set_read_timeout(10);
      auto res = c.Get("/open");
      return res ? res->status : -1;
    }));
  }
  for (auto& r : results) CHECK(r.get() == 200);
  CHECK(most_open.load() <= 4);
}

// A keep-alive request on `c` whose response is read whole: true if it was a 200.
bool GetHelloKeepingAlive(RawConnection& c) {
  if (!c.Send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")) return false;
  std::string reply;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!absl::EndsWith(reply, "hello") && !c.closed() && Clock::now() < deadline) {
    reply += c.ReadUntilClosed(std::chrono::milliseconds(50));
  }
  return absl::StartsWith(reply, "HTTP/1.1 200") && absl::EndsWith(reply, "hello");
}

// `max_connections` open at once; an idle connection can make room as soon as one is needed. The idle
// timeout stays 60 s.
HttpServerOptions ConnectionLimit(int max_connections) {
  HttpServerOptions options;
  options.max_connections = max_connections;
  options.evict_idle_after = absl::ZeroDuration();
  return options;
}

TEST_CASE("At the connection limit, a new client is answered at once: the longest-idle keep-alive connection "
          "makes room",
          "[http][hostile]") {
  TestServer t(ConnectionLimit(2));
  t.Start();
  RawConnection oldest(t.port);
  REQUIRE(GetHelloKeepingAlive(oldest));
  RawConnection newer(t.port);
  REQUIRE(GetHelloKeepingAlive(newer));

  const auto start = Clock::now();
  auto c = t.Client();
  c.set_read_timeout(10);
  auto res = c.Get("/hello");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(Clock::now() - start < std::chrono::seconds(10));
  oldest.ReadUntilClosed(std::chrono::seconds(5));
  CHECK(oldest.closed());
  CHECK(t.server->metrics().dropped.Value({"test", "idle-evicted"}) == 1);
  // The connection used more recently stays open, now the newest client has closed.
  CHECK(GetHelloKeepingAlive(newer));
}

TEST_CASE("At the connection limit, a connection mid-request is never closed for room: the new client waits "
          "for it to finish",
          "[http][hostile]") {
  TestServer t(ConnectionLimit(1));
  SlowRoute slow(t);
  t.Start();
  RawConnection busy(t.port);
  REQUIRE(busy.Send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"));
  REQUIRE(slow.WaitEntered());

  auto waiting = std::async(std::launch::async, [&] {
    auto c = t.Client();
    c.set_read_timeout(20);
    return c.Get("/hello");
  });
  CHECK(waiting.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout);
  slow.release.Open();
  // The busy connection's response is written whole; once it waits for its next request it makes room.
  const std::string reply = busy.ReadUntilClosed(std::chrono::seconds(10));
  CHECK(absl::StartsWith(reply, "HTTP/1.1 200"));
  CHECK(absl::EndsWith(reply, "done"));
  CHECK(busy.closed());
  auto res = waiting.get();
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(t.server->metrics().dropped.Value({"test", "idle-evicted"}) == 1);
}

TEST_CASE("Stop returns promptly while slow clients are connected and idle connections are open", "[http][hostile]") {
  HttpServerOptions options;
  options.request_timeout = absl::Seconds(30);
  TestServer t(options);
  t.Start();
  std::vector<std::unique_ptr<RawConnection>> slow;
  for (int i = 0; i < 16; ++i) {
    slow.push_back(std::make_unique<RawConnection>(t.port));
    REQUIRE(slow.back()->Send("POST /echo HTTP/1.1\r\nHost: x\r\n"));
  }
  auto idle = t.Client();
  idle.set_keep_alive(true);
  REQUIRE(idle.Get("/hello"));
  const auto start = Clock::now();
  t.server->Stop();
  CHECK(Clock::now() - start < std::chrono::seconds(1));
  for (auto& c : slow) {
    c->ReadUntilClosed(std::chrono::seconds(1));
    CHECK(c->closed());
  }
}

TEST_CASE("A blocking handler waiting on something slow does not delay other routes", "[http][load]") {
  HttpServerOptions options;
  options.threads = 1;
  options.blocking_threads = 2;
  options.blocking_queue = 2;
  TestServer t(options);
  Gate api;  // the slow API server the blocking handlers wait for
  std::atomic<int> waiting{0};
  t.server->Handle(
      "POST", "/bind",
      [&](const HttpRequest&) {
        ++waiting;
        api.WaitOpen(std::chrono::seconds(10));
        return HttpResponse{200, "application/json", "{}"};
      },
      RouteOptions{.blocking = true});
  t.Start();
  // Two binds run, two wait for a thread, the fifth is refused at once.
  std::vector<std::future<int>> binds;
  for (int i = 0; i < 4; ++i) {
    binds.push_back(std::async(std::launch::async, [&] {
      auto res = t.Client().Post("/bind", "{}", "application/json");
      return res ? res->status : -1;
    }));
  }
  while (waiting < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the other two reach the queue
  auto refused = t.Client().Post("/bind", "{}", "application/json");
  REQUIRE(refused);
  CHECK(refused->status == 503);
  // The single I/O thread still answers the other routes.
  for (int i = 0; i < 5; ++i) {
    const auto asked = Clock::now();
    auto res = t.Client().Post("/echo", "{}", "application/json");
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(Clock::now() - asked < std::chrono::milliseconds(500));
  }
  api.Open();
  for (auto& b : binds) CHECK(b.get() == 200);
  CHECK(t.Requests("/bind", 200) == 4);
  CHECK(t.Requests("/bind", 503) == 1);
}

TEST_CASE("Expect: 100-continue is answered before the body is sent", "[http]") {
  TestServer t;
  t.Start();
  RawConnection c(t.port);
  REQUIRE(c.Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n"
                 "Connection: close\r\n\r\n"));
  std::string interim;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (!absl::StrContains(interim, "\r\n\r\n") && Clock::now() < deadline) {
    interim += c.ReadUntilClosed(std::chrono::milliseconds(50));
  }
  CHECK(interim == "HTTP/1.1 100 Continue\r\n\r\n");
  REQUIRE(c.Send("abcd"));
  const std::string response = c.ReadUntilClosed(std::chrono::seconds(5));
  CHECK(absl::StartsWith(response, "HTTP/1.1 200 "));
  CHECK(absl::StrContains(response, "{\"bytes\":4,"));
}

// --- Ops endpoints ----------------------------------------------------------------------------------

TEST_CASE("Ops endpoints: livez and healthz, readyz following its checks, metrics text", "[http][ops]") {
  TestServer t;
  std::atomic<bool> ready{false};
  RegisterOpsEndpoints(*t.server, t.registry,
                       {{"serving", [&] { return ready ? std::string() : std::string("starting"); }}});
  t.Start();
  auto cli = t.Client();

  for (const char* live : {"/livez", "/healthz"}) {
    auto health = cli.Get(live);
    REQUIRE(health);
    CHECK(health->status == 200);
    CHECK(health->body == "ok");
  }

  auto not_ready = cli.Get("/readyz");
  REQUIRE(not_ready);
  CHECK(not_ready->status == 503);
  ready = true;
  auto now_ready = cli.Get("/readyz");
  REQUIRE(now_ready);
  CHECK(now_ready->status == 200);
  ready = false;
  not_ready = cli.Get("/readyz");
  REQUIRE(not_ready);
  CHECK(not_ready->status == 503);
  CHECK(not_ready->body == "[-]serving failed: starting\nreadyz check failed\n");

  auto metrics = cli.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->status == 200);
  CHECK(metrics->get_header_value("Content-Type") == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(absl::StrContains(metrics->body, "# TYPE topofit_http_requests_total counter\n"));
  CHECK(absl::StrContains(metrics->body,
                          "topofit_http_requests_total{server=\"test\",route=\"/readyz\",code=\"503\"} 2\n"));
}

TEST_CASE("readyz says which check fails, ?verbose lists every check as Kubernetes components do", "[http][ops]") {
  TestServer t;
  std::string leader_failure = "not the leader: the Lease is held by topofit-1_ab12";
  std::string sync_failure;
  std::mutex mu;  // the probes run on server threads
  const auto read = [&mu](const std::string& s) {
    std::lock_guard<std::mutex> lock(mu);
    return s;
  };
  RegisterOpsEndpoints(*t.server, t.registry,
                       {{"serving", [] { return std::string(); }},
                        {"informer-sync", [&] { return read(sync_failure); }},
                        {"leader-election", [&] { return read(leader_failure); }}});
  t.Start();
  auto cli = t.Client();
  const auto get = [&](const std::string& path) {
    auto res = cli.Get(path.c_str());
    REQUIRE(res);
    return std::make_pair(res->status, res->body);
  };

  SECTION("one check failing: only it is named, with its reason") {
    CHECK(get("/readyz") == std::make_pair(503, std::string("[-]leader-election failed: not the leader: the Lease is "
                                                            "held by topofit-1_ab12\nreadyz check failed\n")));
    CHECK(get("/readyz?verbose") ==
          std::make_pair(503, std::string("[+]serving ok\n[+]informer-sync ok\n[-]leader-election failed: not the "
                                          "leader: the Lease is held by topofit-1_ab12\nreadyz check failed\n")));
  }
  SECTION("two failing: both named, in the order registered") {
    {
      std::lock_guard<std::mutex> lock(mu);
      sync_failure = "nodes not listed yet: connection refused";
    }
    CHECK(get("/readyz") ==
          std::make_pair(503, std::string("[-]informer-sync failed: nodes not listed yet: connection refused\n"
                                          "[-]leader-election failed: not the leader: the Lease is held by "
                                          "topofit-1_ab12\nreadyz check failed\n")));
  }
  SECTION("all passing: ok, and ?verbose lists them") {
    {
      std::lock_guard<std::mutex> lock(mu);
      leader_failure.clear();
    }
    CHECK(get("/readyz") == std::make_pair(200, std::string("ok")));
    CHECK(get("/readyz?verbose") ==
          std::make_pair(200, std::string("[+]serving ok\n[+]informer-sync ok\n[+]leader-election ok\nreadyz check "
                                          "passed\n")));
  }
  SECTION("?exclude leaves a check out") {
    CHECK(get("/readyz?exclude=leader-election") == std::make_pair(200, std::string("ok")));
    CHECK(get("/readyz?verbose&exclude=leader-election&exclude=serving") ==
          std::make_pair(200, std::string("[+]informer-sync ok\nreadyz check passed\n")));
  }
  SECTION("/readyz/<name>: one check alone; an unknown name is 404") {
    CHECK(get("/readyz/informer-sync") == std::make_pair(200, std::string("ok")));
    CHECK(get("/readyz/leader-election") ==
          std::make_pair(503, std::string("[-]leader-election failed: not the leader: the Lease is held by "
                                          "topofit-1_ab12\n")));
    CHECK(get("/readyz/nope").first == 404);
  }
}

// --- TLS --------------------------------------------------------------------------------------------

std::unique_ptr<testing::TestCerts> MakeCerts() {
  auto certs = testing::TestCerts::Create();
  REQUIRE(certs.ok());
  return std::move(*certs);
}

HttpServerOptions TlsOptions(const testing::TestCerts& certs) {
  HttpServerOptions options;
  options.tls_cert_file = certs.server_cert_file();
  options.tls_key_file = certs.server_key_file();
  return options;
}

std::unique_ptr<httplib::SSLClient> TlsClient(int port, const testing::TestCerts& certs, const std::string& cert = "",
                                              const std::string& key = "") {
  auto c = cert.empty() ? std::make_unique<httplib::SSLClient>("127.0.0.1", port)
                        : std::make_unique<httplib::SSLClient>("127.0.0.1", port, cert, key);
  c->set_ca_cert_path(certs.ca_cert_file().c_str());
  c->enable_server_certificate_verification(true);
  c->set_connection_timeout(2);
  c->set_read_timeout(5);
  return c;
}

TEST_CASE("HTTPS: a client verifying against the CA is served", "[http][tls]") {
  const auto certs = MakeCerts();
  TestServer t(TlsOptions(*certs));
  t.Start();
  CHECK(t.server->is_tls());

  auto cli = TlsClient(t.port, *certs);
  auto res = cli->Get("/hello");
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(res->body == "hello");

  // The body limit and forced close work over TLS too.
  auto big = cli->Post("/echo", std::string(kMaxBody + 1, 'x'), "application/json");
  if (big) CHECK(big->status == 413);
  auto next = TlsClient(t.port, *certs)->Get("/hello");
  REQUIRE(next);
  CHECK(next->status == 200);

  // Plain HTTP to the TLS port gets nothing useful.
  CHECK(!t.Client().Get("/hello"));
}

TEST_CASE("HTTPS: a renewed certificate is served to new connections without a restart", "[http][tls]") {
  const std::unique_ptr<testing::TestCerts> first = testing::TestCerts::Create(1001).value();
  const std::unique_ptr<testing::TestCerts> renewed = testing::TestCerts::Create(1002).value();
  testing::MountedSecret secret(first->dir() + "/mounted");
  secret.Update(first->server_cert_file(), first->server_key_file());
  HttpServerOptions options;
  options.tls_cert_file = secret.cert();
  options.tls_key_file = secret.key();
  options.tls_reload_interval = absl::ZeroDuration();  // look at every new connection
  TestServer t(options);
  t.Start();
  CHECK(testing::ServedCertificateSerial(t.port) == 1001);
  auto before = TlsClient(t.port, *first);  // a connection of the first certificate's time
  before->set_keep_alive(true);
  REQUIRE(before->Get("/hello"));

  secret.Update(renewed->server_cert_file(), renewed->server_key_file());  // cert-manager renewed it
  CHECK(testing::ServedCertificateSerial(t.port) == 1002);
  auto res = TlsClient(t.port, *renewed)->Get("/hello");  // verifies against the new CA: the new pair
  REQUIRE(res);
  CHECK(res->status == 200);
  CHECK(t.server->metrics().tls_reloads.Value({"test", "ok"}) == 1);
  auto kept = before->Get("/hello");  // the connection open before keeps its session
  REQUIRE(kept);
  CHECK(kept->status == 200);

  // A pair that does not match (caught mid-update, or a mistake): refused, the renewed one stays.
  secret.Update(first->server_cert_file(), renewed->server_key_file());
  CHECK(testing::ServedCertificateSerial(t.port) == 1002);
  CHECK(t.server->metrics().tls_reloads.Value({"test", "failed"}) == 1);
  CHECK(testing::ServedCertificateSerial(t.port) == 1002);
  CHECK(t.server->metrics().tls_reloads.Value({"test", "failed"}) == 1);  // tried once per change
}

TEST_CASE("mTLS: no client certificate, or one from another CA, is refused", "[http][tls]") {
  const auto certs = MakeCerts();
  HttpServerOptions options = TlsOptions(*certs);
  options.tls_client_ca_file = certs->ca_cert_file();
  TestServer t(options);
  t.Start();

  CHECK(!TlsClient(t.port, *certs)->Get("/hello"));
  CHECK(!TlsClient(t.port, *certs, certs->stranger_cert_file(), certs->stranger_key_file())->Get("/hello"));
  auto res = TlsClient(t.port, *certs, certs->client_cert_file(), certs->client_key_file())->Get("/hello");
  REQUIRE(res);
  CHECK(res->status == 200);
}

TEST_CASE("TLS: 1.2 with forward-secret AEAD suites and 1.3 only", "[http][tls]") {
  const auto certs = MakeCerts();
  TestServer t(TlsOptions(*certs));
  t.Start();
  CHECK(testing::TlsHandshakes(t.port, *certs, TLS1_3_VERSION, TLS1_3_VERSION, nullptr));
  CHECK(testing::TlsHandshakes(t.port, *certs, TLS1_2_VERSION, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256"));
  CHECK(testing::TlsHandshakes(t.port, *certs, TLS1_2_VERSION, TLS1_2_VERSION, "ECDHE-ECDSA-CHACHA20-POLY1305"));
  // CBC with SHA-1 (forward-secret, but not AEAD), and TLS 1.1, are refused.
  CHECK(!testing::TlsHandshakes(t.port, *certs, TLS1_2_VERSION, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA"));
  CHECK(!testing::TlsHandshakes(t.port, *certs, TLS1_2_VERSION, TLS1_2_VERSION, "ECDHE-ECDSA-AES128-SHA256"));
  CHECK(!testing::TlsHandshakes(t.port, *certs, TLS1_VERSION, TLS1_1_VERSION, "ALL:@SECLEVEL=0"));
}

TEST_CASE("Bad TLS options are errors from Create, not aborts", "[http][tls]") {
  const auto certs = MakeCerts();
  MetricsRegistry registry;
  auto create = [&](const std::string& cert, const std::string& key, const std::string& ca = "") {
    HttpServerOptions options;
    options.tls_cert_file = cert;
    options.tls_key_file = key;
    options.tls_client_ca_file = ca;
    return HttpServer::Create(options, registry).status();
  };
  const std::string garbage = certs->dir() + "/garbage.pem";
  std::ofstream(garbage) << "not a certificate\n";

  CHECK(create(certs->server_cert_file(), "").code() == absl::StatusCode::kInvalidArgument);
  CHECK(create(certs->dir() + "/missing.pem", certs->server_key_file()).code() == absl::StatusCode::kInvalidArgument);
  CHECK(create(garbage, certs->server_key_file()).code() == absl::StatusCode::kInvalidArgument);
  CHECK(create(certs->server_cert_file(), garbage).code() == absl::StatusCode::kInvalidArgument);
  // A key that does not belong to the certificate.
  CHECK(create(certs->server_cert_file(), certs->client_key_file()).code() == absl::StatusCode::kInvalidArgument);
  CHECK(create(certs->server_cert_file(), certs->server_key_file(), garbage).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(create(certs->server_cert_file(), certs->server_key_file()).ok());

  HttpServerOptions plain_with_ca;
  plain_with_ca.tls_client_ca_file = certs->ca_cert_file();
  CHECK(!HttpServer::Create(plain_with_ca, registry).ok());
}

}  // namespace
}  // namespace topofit::server
