#pragma once

#include <functional>

#include "server/http_server.h"
#include "server/metrics.h"

namespace topofit::server {

// True once the process can do its job (e.g. the first cluster snapshot is loaded). Called per probe, from
// server threads, so it must be cheap and thread-safe.
using ReadinessCheck = std::function<bool()>;

// Registers on `server`:
//   GET /healthz  200 "ok" while the server runs (liveness: the process answers at all)
//   GET /readyz   200 "ok" when `ready()` is true, else 503 "not ready" (readiness: send traffic here)
//   GET /metrics  `registry` in the Prometheus text format 0.0.4
// `registry` must outlive the server.
void RegisterOpsEndpoints(HttpServer& server, const MetricsRegistry& registry, ReadinessCheck ready);

}  // namespace topofit::server
