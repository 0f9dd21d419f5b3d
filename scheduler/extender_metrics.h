#pragma once

#include "server/metrics.h"

namespace topofit::scheduler {

// The extender's own metrics, declared once (requests and latency per verb come from HttpMetrics).
struct ExtenderMetrics {
  static ExtenderMetrics Create(server::MetricsRegistry& registry);

  server::Counter& nodes_refused;        // topofit_extender_nodes_refused_total{reason}
  server::Counter& binds;                // topofit_extender_binds_total{result}
  server::Counter& bind_refusals;        // topofit_extender_bind_refusals_total{reason} (bind_authorization.h)
  // topofit_extender_bind_pod_reads_total{source}: where a bind read its pod, "watch" or "api"
  server::Counter& bind_pod_reads;
  server::Counter& invalid_pods;         // topofit_extender_invalid_pods_total
  server::Gauge& pending_preferences;    // topofit_extender_pending_preferences
  // topofit_extender_gang_reservations_total{event}: reserved, no_room, expired, cancelled, landed
  server::Counter& gang_reservations;
  // topofit_extender_buffered_starts_total: pods bound on GPUs of the sets CapacityBuffers keep warm
  // (decision/warm_capacity.h)
  server::Counter& buffered_starts;
};

}  // namespace topofit::scheduler
