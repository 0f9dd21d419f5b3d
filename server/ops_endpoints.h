#pragma once

#include <functional>
#include <string>

#include "server/http_server.h"
#include "server/metrics.h"

namespace topofit::server {

// True once the process can do its job (e.g. the first cluster snapshot is loaded). Called per probe, from
// server threads, so it must be cheap and thread-safe.
using ReadinessCheck = std::function<bool()>;
// Why the process is not ready, or "" when it is; the same constraints as ReadinessCheck.
using ReadinessReason = std::function<std::string()>;

// Registers on `server`:
//   GET /healthz  200 "ok" while the server runs (liveness: the process answers at all)
//   GET /readyz   200 "ok" when `ready()` is true, else 503 "not ready" (readiness: send traffic here)
//   GET /metrics  `registry` in the Prometheus text format 0.0.4
// `registry` must outlive the server.
void RegisterOpsEndpoints(HttpServer& server, const MetricsRegistry& registry, ReadinessCheck ready);
// The same, with /readyz answering 503 with the reason as its body.
void RegisterOpsEndpoints(HttpServer& server, const MetricsRegistry& registry, ReadinessReason not_ready);

}  // namespace topofit::server
