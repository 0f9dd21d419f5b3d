#include "kubeclient/rest_client.h"

#include <httplib.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "codec/bounded_json.h"
#include "codec/http_url.h"

namespace topofit::kubeclient {
namespace {

// Token files are re-read this often, as client-go's cachingTokenSource does.
constexpr absl::Duration kTokenRefresh = absl::Minutes(1);

std::string OpenSslErrors() {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    absl::StrAppend(&out, out.empty() ? "" : "; ", buf);
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using Cert = std::unique_ptr<X509, X509Free>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;

Bio MemoryBio(const std::string& pem) { return Bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))); }

// Replaces OpenSSL's chain verification for the API server's certificate: cpp-httplib 0.11 adds the system's
// default roots to the context's store when it first connects, but a cluster CA given in the config must be
// the only trust anchor, as in client-go. So the chain is verified against a store holding only that CA.
int VerifyAgainstClusterCa(X509_STORE_CTX* ctx, void* arg) {
  X509_STORE* trusted = static_cast<X509_STORE*>(arg);
  X509_STORE_CTX* own = X509_STORE_CTX_new();
  if (own == nullptr) return 0;
  int ok = 0;
  if (X509_STORE_CTX_init(own, trusted, X509_STORE_CTX_get0_cert(ctx), X509_STORE_CTX_get0_untrusted(ctx)) == 1) {
    // Keep the TLS layer's parameters (purpose: server authentication).
    X509_VERIFY_PARAM_set1(X509_STORE_CTX_get0_param(own), X509_STORE_CTX_get0_param(ctx));
    ok = X509_verify_cert(own);
    X509_STORE_CTX_set_error(ctx, X509_STORE_CTX_get_error(own));
  } else {
    X509_STORE_CTX_set_error(ctx, X509_V_ERR_UNSPECIFIED);
  }
  X509_STORE_CTX_free(own);
  return ok == 1 ? 1 : 0;
}

// Given to cpp-httplib as its CA directory when the cluster CA verifies the chain (RestClient::Connect):
// OpenSSL only records the path, and nothing looks there.
constexpr char kUnusedCaDirectory[] = "/nonexistent/topofit-verifies-against-the-cluster-ca";

// The reason a Kubernetes Status gives for a 409 on create of an existing object; other 409s are conflicts.
constexpr char kReasonAlreadyExists[] = "AlreadyExists";

absl::StatusCode CodeForHttp(int http_status, absl::string_view reason) {
  switch (http_status) {
    case 400:
    case 415:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 405:
      return absl::StatusCode::kUnimplemented;
    case 409:
      return reason == kReasonAlreadyExists ? absl::StatusCode::kAlreadyExists : absl::StatusCode::kAborted;
    case 410:  // Gone: a resourceVersion too old to list or watch from
    case 412:  // a precondition (UID, resourceVersion) did not hold
      return absl::StatusCode::kFailedPrecondition;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    default:
      break;
  }
  if (http_status >= 500) return absl::StatusCode::kUnavailable;
  return absl::StatusCode::kUnknown;
}

bool Retriable(int http_status) { return http_status == 429 || http_status >= 500; }

constexpr char kHttpStatusPayload[] = "topofit.io/kubeclient/http-status";
constexpr char kRetryAfterPayload[] = "topofit.io/kubeclient/retry-after";

// The same status with another message, keeping its payloads.
absl::Status WithMessage(const absl::Status& status, absl::string_view message) {
  absl::Status out(status.code(), message);
  status.ForEachPayload([&out](absl::string_view type_url, const absl::Cord& payload) {
    out.SetPayload(type_url, payload);
  });
  return out;
}

// The API server sends Retry-After in whole seconds (with 429, and with 5xx from priority and fairness);
// an HTTP date is not parsed and counts as absent.
std::optional<absl::Duration> ParseRetryAfter(absl::string_view retry_after) {
  int64_t seconds = 0;
  if (!absl::SimpleAtoi(retry_after, &seconds) || seconds < 0) return std::nullopt;
  return absl::Seconds(seconds);
}

void SetRetryAfter(absl::Status& status, absl::string_view retry_after) {
  if (!retry_after.empty()) status.SetPayload(kRetryAfterPayload, absl::Cord(retry_after));
}

httplib::Headers MakeHeaders(const std::string& token, const std::string& user_agent) {
  httplib::Headers headers = {{"Accept", "application/json"}, {"User-Agent", user_agent}};
  if (!token.empty()) headers.emplace("Authorization", absl::StrCat("Bearer ", token));
  return headers;
}

}  // namespace

absl::Status StatusFromHttp(int http_status, absl::string_view body) {
  if (http_status >= 200 && http_status < 300) return absl::OkStatus();
  std::string reason;
  std::string message;
  const absl::StatusOr<nlohmann::json> json = codec::ParseBoundedJson(body, codec::kReplyJsonLimits, "reply");
  if (json.ok() && json->is_object() && json->value("kind", "") == "Status") {
    if (json->contains("reason") && (*json)["reason"].is_string()) reason = (*json)["reason"].get<std::string>();
    if (json->contains("message") && (*json)["message"].is_string()) message = (*json)["message"].get<std::string>();
  }
  if (message.empty()) {
    // Not a Status (a proxy in between, say, or JSON beyond the limits): show the start of what came back.
    message = std::string(absl::StripAsciiWhitespace(body.substr(0, 200)));
  }
  absl::Status status(CodeForHttp(http_status, reason),
                      absl::StrCat("HTTP ", http_status, reason.empty() ? "" : " ", reason, ": ", message));
  status.SetPayload(kHttpStatusPayload, absl::Cord(absl::StrCat(http_status)));
  return status;
}

int HttpStatusOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kHttpStatusPayload);
  int http_status = 0;
  if (!payload.has_value() || !absl::SimpleAtoi(std::string(*payload), &http_status)) return 0;
  return http_status;
}

std::optional<absl::Duration> RetryAfterOf(const absl::Status& status) {
  const auto payload = status.GetPayload(kRetryAfterPayload);
  if (!payload.has_value()) return std::nullopt;
  return ParseRetryAfter(std::string(*payload));
}

absl::Duration JitteredBackoff(int attempt, absl::Duration initial, absl::Duration max,
                               const std::function<double()>& uniform_random) {
  const absl::Duration step = std::min(max, initial * std::pow(2.0, std::clamp(attempt - 1, 0, 30)));
  double random = 0;
  if (uniform_random) {
    random = uniform_random();
  } else {
    thread_local std::mt19937_64 engine{std::random_device{}()};
    random = std::uniform_real_distribution<double>(0, 1)(engine);
  }
  return step / 2 + step / 2 * random;
}

void StreamCanceller::Cancel() {
  absl::MutexLock lock(&mu_);
  cancelled_ = true;
  // ClientImpl::stop() is the one call cpp-httplib makes safe from another thread: it shuts the socket
  // down under the client's own lock, and the blocked read fails.
  if (active_ != nullptr) active_->stop();
}

bool StreamCanceller::cancelled() const {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

std::string EscapePathSegment(absl::string_view segment) {
  std::string out;
  for (const char c : segment) {
    if (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(c);
    } else {
      constexpr char kHex[] = "0123456789ABCDEF";  // upper case, as RFC 3986 and Go's url package write it
      const auto byte = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xF]);
    }
  }
  return out;
}

struct RestClient::Tls {
  X509_STORE* cluster_ca = nullptr;  // owned; null when the system's roots are used
  ~Tls() { X509_STORE_free(cluster_ca); }
};

absl::StatusOr<std::unique_ptr<RestClient>> RestClient::Create(const ClusterConfig& config, RestOptions options) {
  absl::StatusOr<codec::HttpUrl> url = codec::ParseHttpUrl(config.server);
  if (!url.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(url.status().message(), ": server \"", config.server, "\""));
  }
  std::unique_ptr<RestClient> rest(new RestClient(config, std::move(options), url->path));
  rest->https_ = url->https;
  rest->host_ = url->host;
  rest->port_ = url->port;
  rest->tls_ = std::make_unique<Tls>();
  if (url->https && !config.insecure_skip_tls_verify && !config.ca_pem.empty()) {
    X509_STORE* store = X509_STORE_new();
    rest->tls_->cluster_ca = store;
    Bio ca_bio = MemoryBio(config.ca_pem);
    int loaded = 0;
    while (X509* ca = PEM_read_bio_X509(ca_bio.get(), nullptr, nullptr, nullptr)) {
      X509_STORE_add_cert(store, ca);  // takes its own reference
      X509_free(ca);
      ++loaded;
    }
    ERR_clear_error();  // the loop ends on an expected "no start line"
    if (loaded == 0) return absl::InvalidArgumentError("certificate authority data holds no PEM certificate");
  }
  // The first pooled connection, set up here so that a bad client certificate or key fails Create, not the
  // first request (cpp-httplib connects at that request).
  absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> client = rest->Connect();
  if (!client.ok()) return client.status();
  rest->Release(*std::move(client), /*healthy=*/true);
  return rest;
}

absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> RestClient::Connect() const {
  std::unique_ptr<httplib::ClientImpl> client;
  if (!https_) {
    client = std::make_unique<httplib::ClientImpl>(host_, port_);
  } else {
    Cert cert;
    Key key;
    if (!config_.client_cert_pem.empty() || !config_.client_key_pem.empty()) {
      Bio cert_bio = MemoryBio(config_.client_cert_pem);
      cert.reset(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
      if (!cert) return absl::InvalidArgumentError(absl::StrCat("client certificate: ", OpenSslErrors()));
      Bio key_bio = MemoryBio(config_.client_key_pem);
      key.reset(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
      if (!key) return absl::InvalidArgumentError(absl::StrCat("client key: ", OpenSslErrors()));
    }
    // The SSL_CTX takes its own references to the certificate and key; ours are freed on return.
    auto ssl = std::make_unique<httplib::SSLClient>(host_, port_, cert.get(), key.get());
    if (!ssl->is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat("TLS client set-up failed (does the client key match "
                                                     "the certificate?): ",
                                                     OpenSslErrors()));
    }
    if (config_.insecure_skip_tls_verify) {
      ssl->enable_server_certificate_verification(false);
    } else if (tls_->cluster_ca != nullptr) {
      SSL_CTX_set_cert_verify_callback(ssl->ssl_context(), VerifyAgainstClusterCa, tls_->cluster_ca);
      // The callback verifies against the cluster CA alone, so the context's own store is never consulted.
      // Without a CA path cpp-httplib fills that store with the system's ~140 roots at each connection's
      // first request (an OpenSSL 3 decode of the whole bundle: ~40 ms of CPU, ~400 ms for 8 connections at
      // once on 2 loaded cores, measured in bind_bench); a directory lookup is lazy and is never asked.
      ssl->set_ca_cert_path(std::string(), kUnusedCaDirectory);
    }
    client = std::move(ssl);
  }
  const auto timeout = absl::ToChronoMilliseconds(options_.timeout);
  client->set_connection_timeout(timeout);
  client->set_read_timeout(timeout);
  client->set_write_timeout(timeout);
  client->set_keep_alive(true);
  // As Go's net package does by default: without it a request written as headers, then body waits on a
  // kept-alive connection for the server's delayed ACK (40 ms on Linux) before the body goes out.
  client->set_tcp_nodelay(true);
  client->set_url_encode(false);  // paths arrive escaped (EscapePathSegment)
  return client;
}

absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> RestClient::Acquire() {
  {
    absl::MutexLock lock(&pool_mu_);
    if (!idle_.empty()) {
      std::unique_ptr<httplib::ClientImpl> client = std::move(idle_.back());
      idle_.pop_back();
      return client;
    }
  }
  return Connect();
}

void RestClient::Release(std::unique_ptr<httplib::ClientImpl> client, bool healthy) {
  if (!healthy) return;
  absl::MutexLock lock(&pool_mu_);
  if (static_cast<int>(idle_.size()) < std::max(1, options_.max_idle_connections)) idle_.push_back(std::move(client));
}

RestClient::RestClient(const ClusterConfig& config, RestOptions options, std::string base_path)
    : config_(config),
      options_(std::move(options)),
      base_path_(std::move(base_path)),
      bucket_(options_.qps, options_.burst, Monotonic()),
      token_(config.bearer_token),
      token_read_at_(Monotonic()) {}

RestClient::~RestClient() = default;

absl::Duration RestClient::Monotonic() const { return options_.clock->Monotonic(); }

absl::StatusOr<nlohmann::json> RestClient::Get(absl::string_view path) {
  return Do("GET", path, "", "", options_.max_attempts);
}

absl::StatusOr<nlohmann::json> RestClient::GetOnce(absl::string_view path) { return Do("GET", path, "", "", 1); }

absl::StatusOr<std::string> RestClient::GetText(absl::string_view path) {
  return DoText("GET", path, "", "", options_.max_attempts);
}

absl::StatusOr<nlohmann::json> RestClient::Post(absl::string_view path, const nlohmann::json& body) {
  return Do("POST", path, body.dump(), "application/json", options_.max_attempts);
}

absl::StatusOr<nlohmann::json> RestClient::Put(absl::string_view path, const nlohmann::json& body) {
  return Do("PUT", path, body.dump(), "application/json", options_.max_attempts);
}

absl::StatusOr<nlohmann::json> RestClient::Patch(absl::string_view path, const nlohmann::json& body,
                                                 absl::string_view content_type) {
  return Do("PATCH", path, body.dump(), content_type, options_.max_attempts);
}

absl::StatusOr<nlohmann::json> RestClient::Delete(absl::string_view path) {
  return Do("DELETE", path, "", "", options_.max_attempts);
}

std::string RestClient::CurrentToken() {
  absl::MutexLock lock(&mu_);
  if (!config_.bearer_token_file.empty() && Monotonic() - token_read_at_ >= kTokenRefresh) {
    token_read_at_ = Monotonic();
    // On a failed read keep the last good token: the file is replaced atomically, but a miss should not
    // turn every request into a 401.
    if (absl::StatusOr<std::string> fresh = ReadFileToString(config_.bearer_token_file); fresh.ok()) {
      const absl::string_view trimmed = absl::StripAsciiWhitespace(*fresh);
      if (!trimmed.empty()) token_ = std::string(trimmed);
    }
  }
  return token_;
}

absl::Duration RestClient::RetryDelay(int attempt, absl::string_view retry_after) {
  if (const std::optional<absl::Duration> wait = ParseRetryAfter(retry_after)) {
    return std::min(*wait, options_.max_retry_after);
  }
  return JitteredBackoff(attempt, options_.initial_backoff, options_.max_backoff, options_.uniform_random);
}

absl::StatusOr<RestClient::Reply> RestClient::SendOnce(const char* method, const std::string& full_path,
                                                       const std::string& body, absl::string_view content_type,
                                                       bool* retriable) {
  const httplib::Headers headers = MakeHeaders(CurrentToken(), options_.user_agent);
  const std::string type(content_type);
  const absl::string_view verb = method;
  absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> client = Acquire();
  if (!client.ok()) {
    *retriable = false;
    return client.status();
  }
  httplib::ClientImpl& connection = **client;
  httplib::Result result = verb == "GET"    ? connection.Get(full_path, headers)
                           : verb == "POST"   ? connection.Post(full_path, headers, body, type)
                           : verb == "PUT"    ? connection.Put(full_path, headers, body, type)
                           : verb == "DELETE" ? connection.Delete(full_path, headers)
                                              : connection.Patch(full_path, headers, body, type);
  if (!result) {
    // A dropped connection may work next time, but a request other than GET may already have reached the
    // server, so only GETs are resent blindly. The same certificate will fail again: not worth a retry.
    *retriable = verb == "GET" && result.error() != httplib::Error::SSLServerVerification;
    absl::Status failed = TransportError(static_cast<int>(result.error()), connection);
    Release(*std::move(client), /*healthy=*/false);
    return failed;
  }
  *retriable = Retriable(result->status);
  Reply reply{result->status, std::move(result->body), result->get_header_value("Retry-After")};
  Release(*std::move(client), /*healthy=*/true);
  return reply;
}

absl::Status RestClient::TransportError(int error_code, httplib::ClientImpl& client) const {
  const auto error = static_cast<httplib::Error>(error_code);
  if (error == httplib::Error::SSLServerVerification) {
    const long verify = static_cast<httplib::SSLClient&>(client).get_openssl_verify_result();
    const char* why = verify != X509_V_OK ? X509_verify_cert_error_string(verify)
                                          : "certificate does not match the server's host name";
    return absl::UnavailableError(absl::StrCat("TLS: API server ", config_.server, " not trusted: ", why));
  }
  return absl::UnavailableError(absl::StrCat("cannot reach API server ", config_.server, ": ",
                                             httplib::to_string(error)));
}

void RestClient::WaitForRateLimit() {
  absl::Duration wait;
  {
    absl::MutexLock lock(&mu_);
    wait = bucket_.Reserve(Monotonic());
  }
  if (wait > absl::ZeroDuration()) Sleep(wait);
}

absl::StatusOr<nlohmann::json> RestClient::Do(const char* method, absl::string_view path, const std::string& body,
                                              absl::string_view content_type, int max_attempts) {
  absl::StatusOr<std::string> text = DoText(method, path, body, content_type, max_attempts);
  if (!text.ok()) return text.status();
  if (absl::StripAsciiWhitespace(*text).empty()) return nlohmann::json::object();
  // A LIST may be 5,000 nodes in one page: bounded, not small (codec/json_limits.h).
  absl::StatusOr<nlohmann::json> json = codec::ParseBoundedJson(*text, codec::kReplyJsonLimits, "response body");
  if (!json.ok()) {
    return absl::DataLossError(absl::StrCat(method, " ", base_path_, path, ": ", json.status().message()));
  }
  return json;
}

absl::StatusOr<std::string> RestClient::DoText(const char* method, absl::string_view path, const std::string& body,
                                               absl::string_view content_type, int max_attempts) {
  const std::string full_path = absl::StrCat(base_path_, path);
  max_attempts = std::max(1, max_attempts);
  absl::Status last;
  int attempt = 1;
  for (;; ++attempt) {
    WaitForRateLimit();

    bool retriable = false;
    absl::StatusOr<Reply> reply = SendOnce(method, full_path, body, content_type, &retriable);
    std::string retry_after;
    if (!reply.ok()) {
      last = reply.status();
    } else {
      last = StatusFromHttp(reply->status, reply->body);
      if (last.ok()) {
        if (options_.on_attempt) options_.on_attempt(ApiAttempt{method, reply->status, last, false, absl::ZeroDuration()});
        return std::move(reply->body);
      }
      retry_after = reply->retry_after;
      SetRetryAfter(last, retry_after);
    }
    const bool retry = retriable && attempt < max_attempts;
    const absl::Duration delay = retry ? RetryDelay(attempt, retry_after) : absl::ZeroDuration();
    if (options_.on_attempt) options_.on_attempt(ApiAttempt{method, reply.ok() ? reply->status : 0, last, retry, delay});
    if (!retry) break;
    Sleep(delay);
  }
  return WithMessage(last, absl::StrCat(method, " ", full_path, ": ", last.message(),
                                        attempt > 1 ? absl::StrCat(" (after ", attempt, " attempts)") : ""));
}

absl::Status RestClient::Stream(absl::string_view path, absl::Duration read_timeout,
                                const std::function<bool(absl::string_view)>& on_data,
                                StreamCanceller& canceller) {
  const std::string full_path = absl::StrCat(base_path_, path);
  absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> client = Connect();
  if (!client.ok()) return client.status();
  (*client)->set_read_timeout(absl::ToChronoMilliseconds(read_timeout));
  (*client)->set_keep_alive(false);
  WaitForRateLimit();
  {
    absl::MutexLock lock(&canceller.mu_);
    if (canceller.cancelled_) return absl::CancelledError(absl::StrCat("GET ", full_path, ": cancelled"));
    canceller.active_ = client->get();
  }
  int http_status = 0;
  std::string error_body;  // the body of a non-2xx reply, for its Status message
  bool stopped_by_reader = false;
  httplib::Result result = (*client)->Get(
      full_path, MakeHeaders(CurrentToken(), options_.user_agent),
      [&http_status](const httplib::Response& response) {
        http_status = response.status;
        return true;
      },
      [&](const char* data, size_t length) {
        if (http_status < 200 || http_status >= 300) {
          if (error_body.size() < 64 * 1024) error_body.append(data, length);
          return true;
        }
        if (!on_data(absl::string_view(data, length))) {
          stopped_by_reader = true;
          return false;
        }
        return true;
      });
  bool cancelled = false;
  {
    absl::MutexLock lock(&canceller.mu_);
    canceller.active_ = nullptr;
    cancelled = canceller.cancelled_;
  }
  if (cancelled || stopped_by_reader) return absl::CancelledError(absl::StrCat("GET ", full_path, ": cancelled"));
  if (!result) {
    const absl::Status transport = TransportError(static_cast<int>(result.error()), **client);
    return WithMessage(transport, absl::StrCat("GET ", full_path, ": ", transport.message()));
  }
  if (http_status < 200 || http_status >= 300) {
    absl::Status status = StatusFromHttp(result->status, error_body.empty() ? result->body : error_body);
    SetRetryAfter(status, result->get_header_value("Retry-After"));
    return WithMessage(status, absl::StrCat("GET ", full_path, ": ", status.message()));
  }
  return absl::OkStatus();
}

void RestClient::Sleep(absl::Duration d) {
  if (d <= absl::ZeroDuration()) return;
  if (options_.sleep) {
    options_.sleep(d);
  } else {
    absl::SleepFor(d);
  }
}

}  // namespace topofit::kubeclient
