#include "server/ops_endpoints.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

namespace topofit::server {
namespace {

constexpr char kText[] = "text/plain; charset=utf-8";

std::string CheckLine(const std::string& name, const std::string& failure) {
  return failure.empty() ? absl::StrCat("[+]", name, " ok\n") : absl::StrCat("[-]", name, " failed: ", failure, "\n");
}

HttpResponse Readyz(const ReadinessChecks& checks, const HttpRequest& request) {
  const bool verbose = request.query.count("verbose") > 0;
  const auto excluded = request.query.equal_range("exclude");
  std::string lines;
  bool ready = true;
  for (const ReadinessCheck& check : checks) {
    if (std::any_of(excluded.first, excluded.second, [&](const auto& e) { return e.second == check.name; })) continue;
    const std::string failure = check.failure();
    ready = ready && failure.empty();
    if (verbose || !failure.empty()) lines += CheckLine(check.name, failure);
  }
  if (ready && !verbose) return HttpResponse{200, kText, "ok"};
  return HttpResponse{ready ? 200 : 503, kText, absl::StrCat(lines, "readyz check ", ready ? "passed" : "failed", "\n")};
}

}  // namespace

void RegisterOpsEndpoints(HttpServer& server, const MetricsRegistry& registry, ReadinessChecks readiness) {
  auto checks = std::make_shared<const ReadinessChecks>(std::move(readiness));
  // Liveness: the process serves HTTP. /livez is Kubernetes' name for it since 1.16; /healthz is kept for
  // probes written against it.
  for (const char* live : {"/livez", "/healthz"}) {
    server.Handle("GET", live, [](const HttpRequest&) { return HttpResponse{200, kText, "ok"}; });
  }
  server.Handle("GET", "/readyz", [checks](const HttpRequest& request) { return Readyz(*checks, request); });
  server.Handle("GET", "/readyz/*", [checks](const HttpRequest& request) {
    for (const ReadinessCheck& check : *checks) {
      if (check.name != request.path_suffix) continue;
      const std::string failure = check.failure();
      return failure.empty() ? HttpResponse{200, kText, "ok"} : HttpResponse{503, kText, CheckLine(check.name, failure)};
    }
    return JsonError(404, absl::StrCat("no readiness check named ", request.path_suffix));
  });
  server.Handle("GET", "/metrics", [&registry](const HttpRequest&) {
    return HttpResponse{200, kPrometheusContentType, registry.Render()};
  });
}

absl::StatusOr<std::unique_ptr<HttpServer>> CreateOpsServer(const std::string& address, int port,
                                                            MetricsRegistry& registry, ReadinessChecks readiness) {
  HttpServerOptions options;
  options.address = address;
  options.port = port;
  options.name = "ops";
  absl::StatusOr<std::unique_ptr<HttpServer>> server = HttpServer::Create(options, registry);
  if (!server.ok()) return server.status();
  RegisterOpsEndpoints(**server, registry, std::move(readiness));
  return server;
}

}  // namespace topofit::server
