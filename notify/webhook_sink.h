#pragma once

// A webhook that restart messages are posted to (issue 35): Slack's incoming webhook or any receiver of
// JSON. Posting happens on a thread of its own behind a bounded queue, so a slow or failing receiver never
// holds up the restart collector (nor, through it, anything that schedules): Offer never blocks, and when
// the queue is full the new message is dropped and counted. A post that fails for a reason that may pass
// (no connection, a timeout, 429, 5xx) is retried with exponential backoff, honouring Retry-After; a 4xx
// other than 429 is the receiver refusing the message and is not retried.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <spdlog/logger.h>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "codec/http_url.h"
#include "notify/restart_notice.h"
#include "server/metrics.h"

namespace httplib {
class ClientImpl;
}  // namespace httplib

namespace topofit::notify {

enum class WebhookFormat {
  kSlack,  // restart_message.h's SlackBody
  kJson,   // restart_message.h's JsonBody
};

struct WebhookSinkOptions {
  std::string name = "webhook";  // the `sink` label of its metrics and logs
  WebhookFormat format = WebhookFormat::kJson;
  std::string cluster;           // named in each message; empty: not named
  std::string ca_file;           // PEM roots for an https receiver; empty: the system's
  // The file the URL came from (webhook_url.h). Before a post the sink reads it again when it changed, so a
  // rotated Secret takes effect without a restart; a file that stops holding a URL keeps the last good one.
  std::string url_file;
  size_t queue_capacity = 100;
  int max_attempts = 5;          // the first post and its retries
  absl::Duration first_backoff = absl::Seconds(1);  // doubles after each failure
  absl::Duration max_backoff = absl::Minutes(1);    // also caps a Retry-After
  absl::Duration timeout = absl::Seconds(10);       // to connect, and for each read and write
};

class WebhookSink {
 public:
  // `log` and `registry` must outlive the sink. Starts the posting thread.
  WebhookSink(codec::HttpUrl url, WebhookSinkOptions options, spdlog::logger& log, server::MetricsRegistry& registry);
  ~WebhookSink();  // Stop()
  WebhookSink(const WebhookSink&) = delete;
  WebhookSink& operator=(const WebhookSink&) = delete;

  // Queues a message; never blocks. False when it was dropped: the queue is full, or the sink stopped.
  bool Offer(RestartNotice notice);
  // Waits up to `timeout` until every message offered so far was posted or given up; true when so.
  bool WaitIdle(absl::Duration timeout);
  // Stops posting: a retry waiting for its backoff is given up, what is queued is dropped (counted).
  // Idempotent.
  void Stop();

 private:
  enum class Outcome { kSent, kRetry, kRejected };
  struct Attempt {
    Outcome outcome;
    absl::Duration retry_after;  // from the receiver's Retry-After; zero when it sent none
    std::string why;             // for the log: the status or the transport error
  };

  void Run();
  void Deliver(std::unique_ptr<httplib::ClientImpl>& client, const RestartNotice& notice);
  // Re-reads options_.url_file when its modification time changed; reconnects when the receiver moved.
  void ReloadUrl(std::unique_ptr<httplib::ClientImpl>& client);
  // A connection to the receiver, kept alive between posts; only the posting thread uses it.
  std::unique_ptr<httplib::ClientImpl> Connect() const;
  Attempt Post(httplib::ClientImpl& client, const std::string& body) const;
  // Sleeps `delay` unless Stop comes first; false when stopping.
  bool Backoff(absl::Duration delay);

  codec::HttpUrl url_;  // the posting thread's, after construction
  std::filesystem::file_time_type url_file_time_{};
  const WebhookSinkOptions options_;
  spdlog::logger& log_;
  server::Counter& messages_;  // topofit_restart_notifications_total{sink, result}
  server::Counter& retries_;   // topofit_restart_notification_retries_total{sink}

  std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<RestartNotice> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace topofit::notify
