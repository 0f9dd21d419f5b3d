#pragma once

// The admission webhook's HTTP(S) route: decode the AdmissionReview, Admit, encode. The node group
// templates come from a function (in the cluster kubeclient::NodeGroupsConfigMap::Live), so tests and the
// server call the same code.

#include <functional>
#include <map>
#include <string>

#include <spdlog/logger.h>

#include "decision/node_topology.h"
#include "kube/node_templates.h"
#include "kube/objects.h"
#include "server/http_server.h"
#include "server/metrics.h"
#include "webhook/admission.h"

namespace topofit::webhook {

inline constexpr char kMutatePath[] = "/mutate";

// The webhook's own metrics, declared once (requests, codes and latency come from HttpMetrics).
struct WebhookMetrics {
  static WebhookMetrics Create(server::MetricsRegistry& registry);

  server::Counter& reviews;          // topofit_webhook_reviews_total{outcome} (OutcomeName)
  server::Counter& invalid_reviews;  // topofit_webhook_invalid_reviews_total: answered 400
};

using TemplatesSource = std::function<kube::NodeTemplates()>;

// POST kMutatePath on `server`: 200 with the AdmissionReview response, or 400 {"error": why} for a body that
// is not an AdmissionReview v1 request (nothing is changed then). Everything given must outlive the server.
void RegisterWebhookRoute(server::HttpServer& server, TemplatesSource templates, decision::TopologySource& topologies,
                          WebhookMetrics& metrics, spdlog::logger& log);

}  // namespace topofit::webhook
