#pragma once

// JSON over HTTPS to the Kubernetes API server, with what client-go adds around a request: bearer token
// (re-read from its file as it rotates), client-side QPS limit, retries of 429 and 5xx with exponential
// backoff and jitter honouring Retry-After, and API errors turned into absl::Status codes carrying the
// server's own Status.message.
//
// Thread-safe. cpp-httplib serialises the requests of one connection, so each request takes a kept-alive
// connection of its own from a pool (a new one when none is idle): concurrent callers (the bind pool's
// threads) run side by side instead of queueing behind one connection, and none pays a TCP and TLS
// handshake while an idle connection waits.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "kubeclient/config.h"
#include "kubeclient/token_bucket.h"
#include "server/clock.h"

namespace httplib {
class ClientImpl;
}

namespace topofit::kubeclient {

// One attempt of a request, as RestOptions::on_attempt reports it.
struct ApiAttempt {
  absl::string_view verb;     // GET, POST, PUT, PATCH, DELETE
  int code = 0;               // the HTTP status; 0 when no reply came (connection refused, reset, timeout)
  absl::Status status;        // OK for a 2xx; else what the attempt failed with
  bool will_retry = false;    // another attempt follows, after retry_in
  absl::Duration retry_in;
};

struct RestOptions {
  absl::Duration timeout = absl::Seconds(10);  // per attempt: connect, and each read or write
  double qps = 5;                              // client-go's defaults
  int burst = 10;
  int max_attempts = 5;  // including the first
  // Connections kept open for reuse when no request needs them; more may be open at once, and those beyond
  // this are closed after their request. client-go's HTTP/1.1 transport keeps 25 per host.
  int max_idle_connections = 25;
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(10);
  absl::Duration max_retry_after = absl::Seconds(30);  // a longer Retry-After is cut to this
  std::string user_agent = "topofit";

  // Injected time (its monotonic reading paces the rate limit and the token's rereads) and randomness;
  // a null sleep or random means the real one.
  const server::Clock* clock = &server::SystemClock();
  std::function<void(absl::Duration)> sleep;
  std::function<double()> uniform_random;  // in [0, 1)

  // Told of every attempt of a request (not of watch streams), on the calling thread, for metrics and
  // logs the process keeps; null: nobody is told.
  std::function<void(const ApiAttempt&)> on_attempt;
};

// Maps an API server reply to a status: 2xx OK; 400/422 InvalidArgument, 401 Unauthenticated,
// 403 PermissionDenied, 404 NotFound, 409 AlreadyExists (reason AlreadyExists) or Aborted (a conflict),
// 410/412 FailedPrecondition, 429 ResourceExhausted, 5xx Unavailable. The message carries the server's
// Status.message when the body is a Status.
absl::Status StatusFromHttp(int http_status, absl::string_view body);

// A failed reply's HTTP status and Retry-After travel on the status as payloads, for callers with retry
// loops of their own (the watch): HttpStatusOf gives 0 for an error that is not an HTTP reply (a dropped
// connection), RetryAfterOf nullopt when the server sent none.
int HttpStatusOf(const absl::Status& status);
std::optional<absl::Duration> RetryAfterOf(const absl::Status& status);

// The wait before retry number `attempt` (from 1) with "equal jitter": of the step min(max, initial *
// 2^(attempt-1)), half is fixed and half scaled by uniform_random() (a real generator when null), so
// clients that failed together spread out.
absl::Duration JitteredBackoff(int attempt, absl::Duration initial, absl::Duration max,
                               const std::function<double()>& uniform_random);

// Percent-encodes one path segment (a namespace or object name) so it cannot change the path.
std::string EscapePathSegment(absl::string_view segment);

// Ends RestClient::Stream calls from another thread. Cancel() makes the running stream's blocking read
// return at once and every later Stream with this canceller return Cancelled without connecting. A stream
// that is between its check and its connect when Cancel() runs misses the wake-up, so a caller waiting for
// the streaming thread repeats Cancel() until that thread is done (ListWatcher::Stop does). Thread-safe.
class StreamCanceller {
 public:
  void Cancel();
  bool cancelled() const;

 private:
  friend class RestClient;
  mutable absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  httplib::ClientImpl* active_ ABSL_GUARDED_BY(mu_) = nullptr;
};

class RestClient {
 public:
  static absl::StatusOr<std::unique_ptr<RestClient>> Create(const ClusterConfig& config, RestOptions options = {});
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  // `path` is absolute under the server's URL, e.g. "/api/v1/namespaces/ns/pods/p". The result is the
  // response body parsed as JSON (an empty body gives an empty object).
  absl::StatusOr<nlohmann::json> Get(absl::string_view path);
  absl::StatusOr<nlohmann::json> Post(absl::string_view path, const nlohmann::json& body);
  // Replaces the object; with metadata.resourceVersion set the server refuses (409 Conflict, Aborted here)
  // when the object changed since that version.
  absl::StatusOr<nlohmann::json> Put(absl::string_view path, const nlohmann::json& body);
  absl::StatusOr<nlohmann::json> Patch(absl::string_view path, const nlohmann::json& body,
                                       absl::string_view content_type);
  absl::StatusOr<nlohmann::json> Delete(absl::string_view path);

  // A GET whose reply is text, not JSON (a pod's log), as the API server sent it; retried like Get.
  absl::StatusOr<std::string> GetText(absl::string_view path);

  // One GET attempt, under the QPS limit but never retried: for callers that retry with their own policy.
  absl::StatusOr<nlohmann::json> GetOnce(absl::string_view path);

  // A streaming GET (a watch) on a connection of its own, so a stream that lasts minutes never holds up
  // the requests on the shared connection; same TLS and credentials. Takes a token from the QPS limit and
  // is never retried. Each piece of a 2xx body goes to `on_data` as it arrives (false stops reading).
  // OK: the server ended the body. Errors: a non-2xx reply as StatusFromHttp, with HttpStatusOf and
  // RetryAfterOf set; Unavailable when the connection fails, drops, or stays silent for `read_timeout`;
  // Cancelled once `canceller` is cancelled, or when `on_data` returned false.
  absl::Status Stream(absl::string_view path, absl::Duration read_timeout,
                      const std::function<bool(absl::string_view)>& on_data, StreamCanceller& canceller);

 private:
  struct Tls;  // OpenSSL objects; defined in the .cc so this header needs no OpenSSL
  struct Reply {
    int status = 0;
    std::string body;
    std::string retry_after;
  };

  RestClient(const ClusterConfig& config, RestOptions options, std::string base_path);
  // A new connection to the API server with this client's TLS set-up and timeouts.
  absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> Connect() const;
  // An idle pooled connection, else a new one; given back with Release after one exchange.
  absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> Acquire();
  // Keeps `client` for the next request unless `max_idle_connections` are idle already, or its exchange
  // failed (`healthy` false: the connection may be half-closed).
  void Release(std::unique_ptr<httplib::ClientImpl> client, bool healthy);
  void WaitForRateLimit();
  // A failed exchange (httplib::Error `error_code`) as Unavailable, naming a TLS verification failure.
  absl::Status TransportError(int error_code, httplib::ClientImpl& client) const;
  absl::StatusOr<nlohmann::json> Do(const char* method, absl::string_view path, const std::string& body,
                                    absl::string_view content_type, int max_attempts);
  // Do without the JSON: the body of the 2xx reply.
  absl::StatusOr<std::string> DoText(const char* method, absl::string_view path, const std::string& body,
                                     absl::string_view content_type, int max_attempts);
  absl::StatusOr<Reply> SendOnce(const char* method, const std::string& full_path, const std::string& body,
                                 absl::string_view content_type, bool* retriable);
  absl::Duration RetryDelay(int attempt, absl::string_view retry_after);
  std::string CurrentToken();
  absl::Duration Monotonic() const;
  void Sleep(absl::Duration d);

  const ClusterConfig config_;
  const RestOptions options_;
  const std::string base_path_;  // the server URL's path, e.g. "/k8s/clusters/c-1" behind a proxy
  bool https_ = true;
  std::string host_;
  int port_ = 0;
  std::unique_ptr<Tls> tls_;     // declared before idle_: the connections' TLS callback points into it

  absl::Mutex pool_mu_;  // apart from mu_: the rate limit's lock is never held across a connect
  std::vector<std::unique_ptr<httplib::ClientImpl>> idle_ ABSL_GUARDED_BY(pool_mu_);

  absl::Mutex mu_;
  TokenBucket bucket_ ABSL_GUARDED_BY(mu_);
  std::string token_ ABSL_GUARDED_BY(mu_);
  absl::Duration token_read_at_ ABSL_GUARDED_BY(mu_);  // monotonic
};

}  // namespace topofit::kubeclient
