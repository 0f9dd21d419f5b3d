#pragma once

// A webhook receiver on loopback for the notification tests: it answers each POST with the next scripted
// status (200 once the script is spent), can hold every reply until released (a slow receiver), and keeps
// what it was sent. Plain HTTP, or HTTPS with the test certificates.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "tests/server/test_certs.h"

namespace topofit::notify::testing {

class WebhookReceiver {
 public:
  struct Reply {
    Reply(int status = 200, std::string retry_after = "") : status(status), retry_after(std::move(retry_after)) {}
    int status;
    std::string retry_after;  // the Retry-After header; empty: none
  };

  // `certs` null: plain HTTP.
  explicit WebhookReceiver(const topofit::testing::TestCerts* certs = nullptr) {
    if (certs != nullptr) {
      server_ = std::make_unique<httplib::SSLServer>(certs->server_cert_file().c_str(),
                                                     certs->server_key_file().c_str());
    } else {
      server_ = std::make_unique<httplib::Server>();
    }
    scheme_ = certs != nullptr ? "https" : "http";
    server_->Post(".*", [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); });
    port_ = server_->bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~WebhookReceiver() {
    Release();
    server_->stop();
    thread_.join();
  }

  std::string url(const std::string& path = "/services/T000/B000/secret") const {
    return absl::StrCat(scheme_, "://127.0.0.1:", port_, path);
  }
  void Script(std::vector<Reply> replies) {
    std::lock_guard<std::mutex> lock(mu_);
    script_.assign(replies.begin(), replies.end());
  }
  // Every reply waits until Release.
  void Hold() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = true;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
    released_.notify_all();
  }
  // Bodies of the POSTs answered 2xx, and of every POST (a retried message is posted more than once).
  std::vector<nlohmann::json> accepted() const {
    std::lock_guard<std::mutex> lock(mu_);
    return accepted_;
  }
  int posts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return posts_;
  }
  std::vector<std::string> paths() const {
    std::lock_guard<std::mutex> lock(mu_);
    return paths_;
  }

 private:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    std::unique_lock<std::mutex> lock(mu_);
    ++posts_;
    paths_.push_back(req.path);
    released_.wait(lock, [this] { return !held_; });
    Reply reply;
    if (!script_.empty()) {
      reply = script_.front();
      script_.pop_front();
    }
    res.status = reply.status;
    if (!reply.retry_after.empty()) res.set_header("Retry-After", reply.retry_after);
    if (reply.status >= 200 && reply.status < 300) {
      accepted_.push_back(nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false));
      res.set_content("ok", "text/plain");
    } else {
      res.set_content("no", "text/plain");
    }
  }

  std::unique_ptr<httplib::Server> server_;
  std::string scheme_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable released_;
  bool held_ = false;
  std::deque<Reply> script_;
  std::vector<nlohmann::json> accepted_;
  std::vector<std::string> paths_;
  int posts_ = 0;
};

}  // namespace topofit::notify::testing
