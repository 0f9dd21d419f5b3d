#include "server/ops_endpoints.h"

#include <utility>

namespace topofit::server {

void RegisterOpsEndpoints(HttpServer& server, const MetricsRegistry& registry, ReadinessCheck ready) {
  server.Handle("GET", "/healthz", [](const HttpRequest&) { return HttpResponse{200, "text/plain; charset=utf-8", "ok"}; });
  server.Handle("GET", "/readyz", [ready = std::move(ready)](const HttpRequest&) {
    return ready() ? HttpResponse{200, "text/plain; charset=utf-8", "ok"}
                   : HttpResponse{503, "text/plain; charset=utf-8", "not ready"};
  });
  server.Handle("GET", "/metrics", [&registry](const HttpRequest&) {
    return HttpResponse{200, kPrometheusContentType, registry.Render()};
  });
}

}  // namespace topofit::server
