#include "notify/webhook_sink.h"

#include <algorithm>
#include <utility>

#include <httplib.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "notify/restart_message.h"
#include "notify/webhook_url.h"
#include "server/logging.h"

namespace topofit::notify {
namespace {

// Retry-After in seconds (the form Slack and most receivers send); an HTTP date or nonsense counts as none.
absl::Duration RetryAfterOf(const httplib::Response& response) {
  int64_t seconds = 0;
  if (!response.has_header("Retry-After") || !absl::SimpleAtoi(response.get_header_value("Retry-After"), &seconds) ||
      seconds < 0) {
    return absl::ZeroDuration();
  }
  return absl::Seconds(seconds);
}

}  // namespace

WebhookSink::WebhookSink(codec::HttpUrl url, WebhookSinkOptions options, spdlog::logger& log,
                         server::MetricsRegistry& registry)
    : url_(std::move(url)),
      options_(std::move(options)),
      log_(log),
      messages_(registry.AddCounter("topofit_restart_notifications_total",
                                    "Restart messages by webhook sink and what became of them: sent, rejected (a "
                                    "4xx), failed (every attempt failed), dropped (the queue was full, or the "
                                    "process stopped first).",
                                    {"sink", "result"})),
      retries_(registry.AddCounter("topofit_restart_notification_retries_total",
                                   "Posts of restart messages retried after a failure that may pass, by sink.",
                                   {"sink"})),
      worker_() {
  if (!options_.url_file.empty()) {
    std::error_code error;
    url_file_time_ = std::filesystem::last_write_time(options_.url_file, error);
  }
  worker_ = std::thread([this] { Run(); });
}

WebhookSink::~WebhookSink() { Stop(); }

void WebhookSink::Stop() {
  size_t dropped = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    dropped = queue_.size();
    queue_.clear();
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
  if (dropped > 0) messages_.Inc({options_.name, "dropped"}, static_cast<double>(dropped));
  idle_.notify_all();
}

bool WebhookSink::Offer(RestartNotice notice) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_ && queue_.size() < options_.queue_capacity) {
      queue_.push_back(std::move(notice));
      wake_.notify_one();
      return true;
    }
  }
  messages_.Inc({options_.name, "dropped"});
  return false;
}

bool WebhookSink::WaitIdle(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_.wait_for(lock, absl::ToChronoMilliseconds(timeout), [this] { return queue_.empty() && !busy_; });
}

bool WebhookSink::Backoff(absl::Duration delay) {
  std::unique_lock<std::mutex> lock(mu_);
  return !wake_.wait_for(lock, absl::ToChronoMilliseconds(delay), [this] { return stopping_; });
}

void WebhookSink::Run() {
  std::unique_ptr<httplib::ClientImpl> client = Connect();
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) break;
    RestartNotice notice = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    Deliver(client, notice);
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
  busy_ = false;
  idle_.notify_all();
}

void WebhookSink::ReloadUrl(std::unique_ptr<httplib::ClientImpl>& client) {
  if (options_.url_file.empty()) return;
  std::error_code error;
  const std::filesystem::file_time_type modified = std::filesystem::last_write_time(options_.url_file, error);
  if (error || modified == url_file_time_) return;
  url_file_time_ = modified;
  absl::StatusOr<codec::HttpUrl> fresh = ReadWebhookUrl(options_.url_file);
  if (!fresh.ok()) {
    server::LogEvent(log_, "restart_webhook_url_unread",
                     {{"sink", options_.name}, {"error", std::string(fresh.status().message())}, {"kept_host", url_.host}},
                     spdlog::level::warn);
    return;
  }
  if (*fresh == url_) return;
  const bool moved = fresh->https != url_.https || fresh->host != url_.host || fresh->port != url_.port;
  url_ = *std::move(fresh);
  if (moved) client = Connect();
  server::LogEvent(log_, "restart_webhook_url_reloaded", {{"sink", options_.name}, {"host", url_.host}});
}

void WebhookSink::Deliver(std::unique_ptr<httplib::ClientImpl>& client, const RestartNotice& notice) {
  ReloadUrl(client);
  const std::string body = (options_.format == WebhookFormat::kSlack ? SlackBody(notice, options_.cluster)
                                                                       : JsonBody(notice, options_.cluster))
                               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string pod = notice.record.pods.empty() ? std::string() : notice.record.pods.front().key;
  absl::Duration backoff = options_.first_backoff;
  for (int attempt = 1;; ++attempt) {
    const Attempt result = Post(*client, body);
    if (result.outcome == Outcome::kSent) {
      messages_.Inc({options_.name, "sent"});
      return;
    }
    const bool last = result.outcome == Outcome::kRejected || attempt >= options_.max_attempts;
    // The URL's path is the webhook's credential: logs name the sink and the host only.
    server::LogEvent(log_, "restart_notification_failed",
                     {{"sink", options_.name}, {"host", url_.host}, {"pod", pod}, {"attempt", attempt},
                      {"error", result.why}, {"retrying", !last}},
                     spdlog::level::warn);
    if (last) {
      messages_.Inc({options_.name, result.outcome == Outcome::kRejected ? "rejected" : "failed"});
      return;
    }
    const absl::Duration wait = std::min(std::max(backoff, result.retry_after), options_.max_backoff);
    if (!Backoff(wait)) {
      messages_.Inc({options_.name, "dropped"});
      return;
    }
    retries_.Inc({options_.name});
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

std::unique_ptr<httplib::ClientImpl> WebhookSink::Connect() const {
  std::unique_ptr<httplib::ClientImpl> client;
  if (url_.https) {
    auto ssl = std::make_unique<httplib::SSLClient>(url_.host, url_.port);
    if (!options_.ca_file.empty()) ssl->set_ca_cert_path(options_.ca_file);
    ssl->enable_server_certificate_verification(true);
    client = std::move(ssl);
  } else {
    client = std::make_unique<httplib::ClientImpl>(url_.host, url_.port);
  }
  const auto timeout = absl::ToChronoMicroseconds(options_.timeout);
  client->set_connection_timeout(timeout);
  client->set_read_timeout(timeout);
  client->set_write_timeout(timeout);
  client->set_keep_alive(true);
  return client;
}

WebhookSink::Attempt WebhookSink::Post(httplib::ClientImpl& client, const std::string& body) const {
  const std::string path = url_.path.empty() ? std::string("/") : url_.path;
  const httplib::Headers headers = {{"User-Agent", "topofit-restart-notifier"}};
  const httplib::Result result = client.Post(path, headers, body, "application/json");
  if (!result) return {Outcome::kRetry, absl::ZeroDuration(), httplib::to_string(result.error())};
  const int status = result->status;
  if (status >= 200 && status < 300) return {Outcome::kSent, absl::ZeroDuration(), ""};
  const std::string why = absl::StrCat("HTTP ", status);
  if (status == 408 || status == 429 || status >= 500) return {Outcome::kRetry, RetryAfterOf(*result), why};
  return {Outcome::kRejected, absl::ZeroDuration(), why};
}

}  // namespace topofit::notify
