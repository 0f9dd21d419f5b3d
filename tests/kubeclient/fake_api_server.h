#pragma once

// A stand-in for the Kubernetes API server on 127.0.0.1: HTTPS with a throwaway CA, every request
// recorded, replies scripted in order (real Kubernetes JSON shapes are the tests' business). With nothing
// scripted it answers as the API server does for an unknown object: 404 with a Status.

#include <httplib.h>

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "kubeclient/config.h"
#include "tests/server/test_certs.h"

namespace topofit::kubeclient::testing {

struct RecordedRequest {
  std::string method;
  std::string target;  // path and query exactly as sent, before the server's URL decoding
  httplib::Headers headers;
  std::string body;

  std::string Header(const std::string& key) const {
    auto it = headers.find(key);
    return it == headers.end() ? "" : it->second;
  }
};

struct ScriptedReply {
  int status = 200;
  std::string body;
  httplib::Headers headers;
};

// A Kubernetes metav1.Status, as the API server writes it for a failed request.
inline std::string StatusJson(int code, const std::string& reason, const std::string& message) {
  return nlohmann::json{{"kind", "Status"},         {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
                        {"status", "Failure"},      {"message", message}, {"reason", reason},
                        {"code", code}}
      .dump();
}

class FakeApiServer {
 public:
  // `client_ca_file`: when set, the server demands a client certificate signed by it (mutual TLS).
  explicit FakeApiServer(const topofit::testing::TestCerts& certs, const char* client_ca_file = nullptr)
      : server_(certs.server_cert_file().c_str(), certs.server_key_file().c_str(), client_ca_file) {
    const auto handler = [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); };
    server_.Get(".*", handler);
    server_.Post(".*", handler);
    server_.Patch(".*", handler);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeApiServer() {
    server_.stop();
    thread_.join();
  }

  bool valid() const { return server_.is_valid() && port_ > 0; }
  std::string url() const { return absl::StrCat("https://127.0.0.1:", port_); }

  void Script(int status, std::string body, httplib::Headers headers = {}) {
    absl::MutexLock lock(&mu_);
    replies_.push_back({status, std::move(body), std::move(headers)});
  }
  std::vector<RecordedRequest> requests() const {
    absl::MutexLock lock(&mu_);
    return requests_;
  }

 private:
  void Handle(const httplib::Request& req, httplib::Response& res) {
    absl::MutexLock lock(&mu_);
    requests_.push_back({req.method, req.target, req.headers, req.body});
    ScriptedReply reply{404, StatusJson(404, "NotFound", "the server could not find the requested resource"), {}};
    if (!replies_.empty()) {
      reply = std::move(replies_.front());
      replies_.pop_front();
    }
    res.status = reply.status;
    for (const auto& [key, value] : reply.headers) res.set_header(key, value);
    res.set_content(reply.body, "application/json");
  }

  httplib::SSLServer server_;
  int port_ = -1;
  std::thread thread_;
  mutable absl::Mutex mu_;
  std::deque<ScriptedReply> replies_ ABSL_GUARDED_BY(mu_);
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mu_);
};

// The CA bundle a client needs to trust the fake server, plus a bearer token.
inline ClusterConfig ConfigFor(const FakeApiServer& server, const topofit::testing::TestCerts& certs) {
  ClusterConfig config;
  config.server = server.url();
  config.ca_pem = ReadFileToString(certs.ca_cert_file()).value();
  config.bearer_token = "test-token";
  return config;
}

}  // namespace topofit::kubeclient::testing
