#include "bench/http_client.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace topofit::bench {
namespace {

constexpr size_t kReadBytes = 1 << 20;      // per recv: large, as a Go reader asks once it knows the size
constexpr size_t kMaxHeadBytes = 64 << 10;  // of a reply's status line and headers

}  // namespace

KeepAliveClient::~KeepAliveClient() {
  if (fd_ >= 0) ::close(fd_);
}

bool KeepAliveClient::Connect() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port_));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd_ < 0 || ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    error_ = absl::StrCat("connect: ", std::strerror(errno));
    return false;
  }
  int yes = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
  return true;
}

int KeepAliveClient::Post(absl::string_view path, absl::string_view body,
                          const std::vector<std::pair<std::string, std::string>>& headers) {
  return Send("POST", path, body, headers);
}

int KeepAliveClient::Send(absl::string_view method, absl::string_view path, absl::string_view body,
                          const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string head = absl::StrCat(method, " ", path, " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n",
                                  "Content-Length: ", body.size(), "\r\n");
  for (const auto& [name, value] : headers) absl::StrAppend(&head, name, ": ", value, "\r\n");
  head.append("\r\n");
  if (fd_ < 0 && !Connect()) return -1;
  const int status = Exchange(head, body);
  // The server may have closed an idle keep-alive connection: one retry on a new one, as net/http does.
  if (status < 0 && Connect()) return Exchange(head, body);
  return status;
}

int KeepAliveClient::Exchange(absl::string_view head, absl::string_view body) {
  reply_size_ = 0;
  // Request: head and body in one writev, then the rest of the body.
  size_t sent = 0;
  const size_t total = head.size() + body.size();
  while (sent < total) {
    iovec parts[2];
    int count = 0;
    if (sent < head.size()) parts[count++] = {const_cast<char*>(head.data() + sent), head.size() - sent};
    const size_t body_sent = sent > head.size() ? sent - head.size() : 0;
    if (body_sent < body.size()) parts[count++] = {const_cast<char*>(body.data() + body_sent), body.size() - body_sent};
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = static_cast<size_t>(count);
    const ssize_t n = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
    if (n <= 0) {
      error_ = absl::StrCat("send: ", std::strerror(errno));
      return -1;
    }
    sent += static_cast<size_t>(n);
  }
  // Reply head: read until the blank line; what follows it is the body's start.
  std::string buffer;
  size_t head_end = std::string::npos;
  while (head_end == std::string::npos) {
    if (buffer.size() > kMaxHeadBytes) {
      error_ = "reply head too long";
      return -1;
    }
    char chunk[16384];
    const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) {
      error_ = n == 0 ? "connection closed" : absl::StrCat("recv: ", std::strerror(errno));
      return -1;
    }
    buffer.append(chunk, static_cast<size_t>(n));
    head_end = buffer.find("\r\n\r\n");
  }
  int status = -1;
  size_t length = 0;
  bool has_length = false;
  const std::vector<absl::string_view> lines = absl::StrSplit(absl::string_view(buffer).substr(0, head_end), "\r\n");
  const std::vector<absl::string_view> status_line = absl::StrSplit(lines[0], ' ');
  if (status_line.size() < 2 || !absl::SimpleAtoi(status_line[1], &status)) {
    error_ = absl::StrCat("bad status line: ", lines[0]);
    return -1;
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::EqualsIgnoreCase(lines[i].substr(0, colon), "Content-Length")) {
      has_length = absl::SimpleAtoi(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)), &length);
    }
  }
  if (!has_length) {
    error_ = "reply without Content-Length";
    return -1;
  }
  // Body: what came with the head, then large reads straight into the kept buffer.
  if (reply_.size() < length) reply_.resize(length);
  const size_t early = std::min(length, buffer.size() - head_end - 4);
  std::memcpy(reply_.data(), buffer.data() + head_end + 4, early);
  size_t got = early;
  while (got < length) {
    const ssize_t n = ::recv(fd_, reply_.data() + got, std::min(kReadBytes, length - got), 0);
    if (n <= 0) {
      error_ = n == 0 ? "connection closed mid-body" : absl::StrCat("recv: ", std::strerror(errno));
      return -1;
    }
    got += static_cast<size_t>(n);
  }
  reply_size_ = length;
  return status;
}

}  // namespace topofit::bench
