#include "webhook/webhook_http.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "codec/admission_json.h"
#include "server/logging.h"

namespace topofit::webhook {

WebhookMetrics WebhookMetrics::Create(server::MetricsRegistry& registry) {
  return WebhookMetrics{
      .reviews = registry.AddCounter("topofit_webhook_reviews_total",
                                     "Admission reviews answered, by what became of the object.", {"outcome"}),
      .invalid_reviews = registry.AddCounter("topofit_webhook_invalid_reviews_total",
                                             "Requests that were not an AdmissionReview v1 request (answered 400).", {}),
  };
}

void RegisterWebhookRoute(server::HttpServer& server, TemplatesSource templates, decision::TopologySource& topologies,
                          WebhookMetrics& metrics, spdlog::logger& log) {
  server.Handle("POST", kMutatePath,
                [templates = std::move(templates), &topologies, &metrics, &log](const server::HttpRequest& http) {
                  absl::StatusOr<codec::AdmissionRequest> request = codec::ParseAdmissionReview(http.body);
                  if (!request.ok()) {
                    metrics.invalid_reviews.Inc();
                    return server::JsonError(400, request.status().message());
                  }
                  const Admission admission = Admit(*request, templates(), topologies);
                  metrics.reviews.Inc({OutcomeName(admission.outcome)});
                  if (admission.outcome != Outcome::kNotRequired && admission.outcome != Outcome::kNotPodCreate) {
                    server::LogEvent(log, "pod_admitted",
                                     {{"pod", absl::StrCat(request->namespace_name, "/", request->name)},
                                      {"uid", request->uid},
                                      {"outcome", OutcomeName(admission.outcome)},
                                      {"dry_run", request->dry_run}});
                  }
                  return server::HttpResponse(200, "application/json", codec::AdmissionReviewToJson(admission.response));
                });
}

}  // namespace topofit::webhook
