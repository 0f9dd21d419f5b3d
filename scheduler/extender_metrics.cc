#include "scheduler/extender_metrics.h"

namespace topofit::scheduler {

ExtenderMetrics ExtenderMetrics::Create(server::MetricsRegistry& registry) {
  return ExtenderMetrics{
      registry.AddCounter("topofit_extender_nodes_refused_total",
                          "Nodes the filter refused, by the first unmet part of the pod's request.", {"reason"}),
      registry.AddCounter("topofit_extender_binds_total", "Bind calls by result.", {"result"}),
      registry.AddCounter("topofit_extender_bind_refusals_total",
                          "Binds refused before anything was written (result=\"refused\"), by reason.", {"reason"}),
      registry.AddCounter("topofit_extender_bind_pod_reads_total",
                          "Where binds read their pod: the watch of pending pods (\"watch\") or a GET (\"api\").",
                          {"source"}),
      registry.AddCounter("topofit_extender_invalid_pods_total",
                          "Filter calls for pods whose GPU request or topofit.io annotations are invalid.", {}),
      registry.AddGauge("topofit_extender_pending_preferences",
                        "GPU pods waiting for capacity no existing node can give (the ledger's preferences).", {}),
      registry.AddCounter("topofit_extender_gang_reservations_total",
                          "Gang reservations by event: reserved, no_room (no domain or node holds the gang), "
                          "expired (not all members came in time), cancelled (their GPUs were taken), landed.",
                          {"event"}),
      registry.AddCounter("topofit_extender_buffered_starts_total",
                          "Device-plugin pods bound on GPUs of the sets cluster-autoscaler's CapacityBuffers keep warm: "
                          "pods that did not wait for a node to boot.",
                          {}),
  };
}

}  // namespace topofit::scheduler
