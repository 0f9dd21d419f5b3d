#pragma once

#include "server/metrics.h"

namespace topofit::agent {

// Every metric of the node agent, declared once.
struct AgentMetrics {
  static AgentMetrics Create(server::MetricsRegistry& registry);

  server::Gauge& devices;                 // topofit_agent_devices{health}: Healthy / Unhealthy
  server::Counter& preferred;             // topofit_agent_preferred_allocations_total{result}: honoured, fallback, error
  server::Counter& allocations;           // topofit_agent_allocations_total{result}: chosen, other_devices, unmatched, error
  server::Counter& mismatches_corrected;  // topofit_agent_gpu_ids_corrected_total
  server::Counter& registrations;         // topofit_agent_registrations_total{result}: ok, error
  server::Counter& topology_published;    // topofit_agent_topology_published_total{result}: ok, error
  server::Counter& health_published;      // topofit_agent_unhealthy_gpus_published_total{result}: ok, error
  server::Counter& discovery_errors;      // topofit_agent_nvidia_smi_errors_total
  server::Gauge& streams;                 // topofit_agent_list_and_watch_streams
  server::Counter& streams_refused;       // topofit_agent_list_and_watch_refused_total
};

}  // namespace topofit::agent
