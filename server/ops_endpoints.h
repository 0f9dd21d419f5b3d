#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/http_server.h"
#include "server/metrics.h"

namespace topofit::server {

// One readiness check, named as Kubernetes components name theirs ("informer-sync", "leader-election"):
// `failure` returns "" when the check passes, else why it fails. Called per probe, from server threads, so
// it must be cheap and thread-safe.
struct ReadinessCheck {
  std::string name;
  std::function<std::string()> failure;
};
using ReadinessChecks = std::vector<ReadinessCheck>;

// Registers on `server`:
//   GET /healthz  200 "ok" while the server runs (liveness: the process answers at all)
//   GET /readyz   readiness (send traffic here), in the format of Kubernetes components' /readyz:
//                   every check passes: 200 "ok"
//                   else: 503, the failing checks one per line, then "readyz check failed":
//                     [-]leader-election failed: not the leader: the Lease is held by topofit-1_ab12
//                     readyz check failed
//                 ?verbose lists every check, passing ones as "[+]informer-sync ok", and ends with
//                 "readyz check passed" or "readyz check failed"; ?exclude=<name> (repeatable) leaves a
//                 check out
//   GET /readyz/<name>  that check alone: 200 "ok", or 503 "[-]<name> failed: <reason>"; 404 for no such check
//   GET /metrics  `registry` in the Prometheus text format 0.0.4
// `registry` must outlive the server.
void RegisterOpsEndpoints(HttpServer& server, const MetricsRegistry& registry, ReadinessChecks readiness);

// A process's ops server ("ops": plain HTTP on `address`:`port`, 0 for an ephemeral port; its own request
// metrics go to `registry`) with the endpoints above registered, not started: a command adds its own routes,
// then starts it.
absl::StatusOr<std::unique_ptr<HttpServer>> CreateOpsServer(const std::string& address, int port,
                                                            MetricsRegistry& registry, ReadinessChecks readiness);

}  // namespace topofit::server
