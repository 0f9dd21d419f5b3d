// The floor under extender_bench's full-Nodes rows: how long this machine takes just to move a request's
// and a reply's bytes over loopback TCP, with no JSON and no decisions. Three ways, each a request of
// --request-bytes answered by a reply of --reply-bytes on one keep-alive connection:
//   - raw, reused buffers: send/recv in 1 MiB calls into buffers allocated once (the lower bound);
//   - raw, fresh buffers: the same, with each request's and reply's buffer allocated anew, as a server that
//     keeps no buffer between requests does (above glibc's mmap threshold every page faults in again);
//   - httplib server, buffers reused: an httplib::Server POST handler reading the body with its ContentReader
//     (4 KiB per recv, each after a poll: CPPHTTPLIB_RECV_BUFSIZ is compiled into Debian's libcpp-httplib)
//     into a string kept between requests and answering from a kept string through a content provider,
//     driven by bench/http_client.h (large reads into a kept buffer, as a Go client);
//   - httplib, plain: the body into a new string, set_content of a new string, Client::Post — the stack
//     extender_bench measured before, without the extender.
//
//   loopback_floor [--request-bytes=46300000] [--reply-bytes=38800000] [--iterations=20]
//
// Defaults: the 5,000-node filter request and reply of extender_bench's default fleet.

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "bench/flag_value.h"
#include "bench/http_client.h"

namespace topofit::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kIoBytes = 1 << 20;  // per send/recv call in the raw exchanges

struct Flags {
  size_t request_bytes = 46300000;
  size_t reply_bytes = 38800000;
  int iterations = 20;
};

bool ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    const auto value = [arg = absl::string_view(argv[i])](absl::string_view name) { return FlagValue(arg, name); };
    bool ok = false;
    if (auto v = value("--request-bytes="); !v.empty()) {
      ok = absl::SimpleAtoi(v, &flags.request_bytes);
    } else if (auto v = value("--reply-bytes="); !v.empty()) {
      ok = absl::SimpleAtoi(v, &flags.reply_bytes);
    } else if (auto v = value("--iterations="); !v.empty()) {
      ok = absl::SimpleAtoi(v, &flags.iterations) && flags.iterations > 0;
    }
    if (!ok) {
      std::fprintf(stderr, "loopback_floor: bad argument %s\n", argv[i]);
      return false;
    }
  }
  return true;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

std::string LoadAverage() {
  std::ifstream file("/proc/loadavg");
  std::string a, b, c;
  file >> a >> b >> c;
  return absl::StrCat(a, " ", b, " ", c);
}

void Report(const char* what, const std::vector<double>& ms) {
  std::printf("| %s | %d | %.1f | %.1f | %.1f | %s |\n", what, static_cast<int>(ms.size()), Percentile(ms, 50),
              Percentile(ms, 99), *std::min_element(ms.begin(), ms.end()), LoadAverage().c_str());
  std::fflush(stdout);
}

bool SendAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t sent = ::send(fd, data, std::min(n, kIoBytes), MSG_NOSIGNAL);
    if (sent <= 0) return false;
    data += sent;
    n -= static_cast<size_t>(sent);
  }
  return true;
}

bool RecvAll(int fd, char* data, size_t n) {
  while (n > 0) {
    const ssize_t got = ::recv(fd, data, std::min(n, kIoBytes), 0);
    if (got <= 0) return false;
    data += got;
    n -= static_cast<size_t>(got);
  }
  return true;
}

void NoDelay(int fd) {
  int yes = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
}

// One raw exchange per iteration: the client sends the request, the server reads all of it and sends the
// reply, the client reads all of that. `fresh` allocates every buffer per exchange.
std::vector<double> RawExchanges(const Flags& flags, bool fresh) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(listener, 1) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("listen");
    std::exit(1);
  }
  std::thread server([&] {
    const int fd = ::accept(listener, nullptr, nullptr);
    NoDelay(fd);
    std::string reused_request(flags.request_bytes, '\0');
    const std::string reply(flags.reply_bytes, 'r');
    for (int i = 0; i < flags.iterations; ++i) {
      std::string fresh_request;
      if (fresh) fresh_request.resize(flags.request_bytes);  // resize, not reserve: the bytes are written by recv
      std::string& request = fresh ? fresh_request : reused_request;
      if (!RecvAll(fd, request.data(), request.size())) break;
      if (fresh) {
        const std::string fresh_reply(flags.reply_bytes, 'r');
        if (!SendAll(fd, fresh_reply.data(), fresh_reply.size())) break;
      } else if (!SendAll(fd, reply.data(), reply.size())) {
        break;
      }
    }
    ::close(fd);
  });
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    std::perror("connect");
    std::exit(1);
  }
  NoDelay(fd);
  const std::string request(flags.request_bytes, 'q');
  std::string reused_reply(flags.reply_bytes, '\0');
  std::vector<double> ms;
  for (int i = 0; i < flags.iterations; ++i) {
    const Clock::time_point t0 = Clock::now();
    std::string fresh_reply;
    if (fresh) fresh_reply.resize(flags.reply_bytes);
    std::string& reply = fresh ? fresh_reply : reused_reply;
    if (!SendAll(fd, request.data(), request.size()) || !RecvAll(fd, reply.data(), reply.size())) {
      std::fprintf(stderr, "raw exchange failed\n");
      std::exit(1);
    }
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  ::close(fd);
  server.join();
  ::close(listener);
  return ms;
}

// `reuse`: the server reads into a buffer kept between requests and writes its reply from a string kept as
// well (a content provider, no copy), and the client is bench/http_client.h's. Otherwise httplib's plain
// path: the body appended to a reserved string, set_content of a new string, Client::Post.
std::vector<double> HttplibExchanges(const Flags& flags, bool reuse) {
  httplib::Server svr;
  svr.set_tcp_nodelay(true);
  svr.set_keep_alive_max_count(1000000);
  std::string kept_body;
  const std::string kept_reply(flags.reply_bytes, 'r');
  svr.Post("/echo", [&](const httplib::Request&, httplib::Response& res, const httplib::ContentReader& reader) {
    std::string fresh_body;
    std::string& body = reuse ? kept_body : fresh_body;
    body.clear();
    body.reserve(flags.request_bytes);
    reader([&](const char* data, size_t n) {
      body.append(data, n);
      return true;
    });
    if (!reuse) {
      res.set_content(std::string(flags.reply_bytes, 'r'), "application/json");
      return;
    }
    res.set_content_provider(kept_reply.size(), "application/json",
                             [&](size_t offset, size_t length, httplib::DataSink& sink) {
                               return sink.write(kept_reply.data() + offset, length);
                             });
  });
  const int port = svr.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { svr.listen_after_bind(); });
  while (!svr.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  httplib::Client plain("127.0.0.1", port);
  plain.set_keep_alive(true);
  plain.set_tcp_nodelay(true);
  plain.set_read_timeout(300, 0);
  plain.set_write_timeout(300, 0);
  KeepAliveClient reusing(port);
  const std::string request(flags.request_bytes, 'q');
  std::vector<double> ms;
  for (int i = 0; i < flags.iterations; ++i) {
    const Clock::time_point t0 = Clock::now();
    size_t reply_bytes = 0;
    if (reuse) {
      if (reusing.Post("/echo", request) == 200) reply_bytes = reusing.reply().size();
    } else if (httplib::Result result = plain.Post("/echo", request, "application/json")) {
      reply_bytes = result->body.size();
    }
    if (reply_bytes != flags.reply_bytes) {
      std::fprintf(stderr, "httplib exchange failed\n");
      std::exit(1);
    }
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  svr.stop();
  serving.join();
  return ms;
}

int Main(int argc, char** argv) {
  Flags flags;
  if (!ParseFlags(argc, argv, flags)) return 2;
  std::printf("## loopback_floor: request %zu bytes, reply %zu bytes, %d exchanges each, one connection\n\n",
              flags.request_bytes, flags.reply_bytes, flags.iterations);
  std::printf("| exchange | n | p50 ms | p99 ms | min ms | load average after |\n|---|---:|---:|---:|---:|---|\n");
  Report("raw TCP, buffers reused", RawExchanges(flags, false));
  Report("raw TCP, buffers fresh per exchange", RawExchanges(flags, true));
  Report("httplib 0.11 server, buffers reused (ContentReader, content provider)", HttplibExchanges(flags, true));
  Report("httplib 0.11, plain (ContentReader into a new string, set_content, Client::Post)",
         HttplibExchanges(flags, false));
  return 0;
}

}  // namespace
}  // namespace topofit::bench

int main(int argc, char** argv) { return topofit::bench::Main(argc, argv); }
