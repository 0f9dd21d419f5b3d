#include "server/ops_endpoints.h"

#include <utility>

namespace topofit::server {

void RegisterOpsEndpoints(HttpServer& server, const MetricsRegistry& registry, ReadinessCheck ready) {
  RegisterOpsEndpoints(server, registry, ReadinessReason([ready = std::move(ready)] {
                         return ready() ? std::string() : std::string("not ready");
                       }));
}

void RegisterOpsEndpoints(HttpServer& server, const MetricsRegistry& registry, ReadinessReason not_ready) {
  server.Handle("GET", "/healthz", [](const HttpRequest&) { return HttpResponse{200, "text/plain; charset=utf-8", "ok"}; });
  server.Handle("GET", "/readyz", [not_ready = std::move(not_ready)](const HttpRequest&) {
    std::string reason = not_ready();
    return reason.empty() ? HttpResponse{200, "text/plain; charset=utf-8", "ok"}
                          : HttpResponse{503, "text/plain; charset=utf-8", std::move(reason)};
  });
  server.Handle("GET", "/metrics", [&registry](const HttpRequest&) {
    return HttpResponse{200, kPrometheusContentType, registry.Render()};
  });
}

}  // namespace topofit::server
