#pragma once

// The bench's HTTP/1.1 client, standing in for kube-scheduler's (Go's net/http + encoding/json): one
// keep-alive connection to 127.0.0.1 with TCP_NODELAY, the request written from where it lies, the reply
// read with large reads into a buffer kept between calls. httplib's client would instead copy the request
// body, read the reply 4 KiB per recv (each after a poll) and grow a new string per reply: at 40 MiB that
// is ~60 ms of client work and a page fault per 4 KiB (~20 us each on this VM; bench/RESULTS.md), which a
// Go client, reading in large chunks into a heap it reuses, does not pay.
//
// Only what the bench's servers answer is understood: a status line, headers with Content-Length, and a
// body of that length (no chunked replies, no 1xx).

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace topofit::bench {

class KeepAliveClient {
 public:
  explicit KeepAliveClient(int port) : port_(port) {}
  ~KeepAliveClient();
  KeepAliveClient(const KeepAliveClient&) = delete;
  KeepAliveClient& operator=(const KeepAliveClient&) = delete;

  // POSTs `body` as application/json with `headers` ({name, value}) added. Returns the status, or -1 on a
  // transport or protocol error (see error()); reconnects once if the kept connection was closed.
  // reply() holds the reply's body until the next call.
  int Post(absl::string_view path, absl::string_view body,
           const std::vector<std::pair<std::string, std::string>>& headers = {});
  // The same with another method (the soak's DELETE).
  int Send(absl::string_view method, absl::string_view path, absl::string_view body,
           const std::vector<std::pair<std::string, std::string>>& headers = {});
  absl::string_view reply() const { return absl::string_view(reply_.data(), reply_size_); }
  const std::string& error() const { return error_; }

 private:
  bool Connect();
  int Exchange(absl::string_view head, absl::string_view body);

  int port_;
  int fd_ = -1;
  std::string reply_;  // capacity kept between calls; bytes past reply_size_ are stale
  size_t reply_size_ = 0;
  std::string error_;
};

}  // namespace topofit::bench
