#include "agent/agent_metrics.h"

namespace topofit::agent {

AgentMetrics AgentMetrics::Create(server::MetricsRegistry& registry) {
  return AgentMetrics{
      registry.AddGauge("topofit_agent_devices", "GPUs offered to the kubelet, by health", {"health"}),
      registry.AddCounter("topofit_agent_preferred_allocations_total",
                          "GetPreferredAllocation answers: honoured (the extender's choice), fallback (topofit's "
                          "allocator), error",
                          {"result"}),
      registry.AddCounter("topofit_agent_allocations_total",
                          "Allocate calls: chosen (the pod's chosen GPUs), other_devices (the kubelet gave the "
                          "pod others), unmatched (no pod waited for them), error",
                          {"result"}),
      registry.AddCounter("topofit_agent_gpu_ids_corrected_total",
                          "Pods whose topofit.io/gpu-ids was patched to the devices the kubelet says they hold"),
      registry.AddCounter("topofit_agent_registrations_total", "Registrations with the kubelet", {"result"}),
      registry.AddCounter("topofit_agent_topology_published_total",
                          "Patches of the node's topofit.io/gpu-topology annotation", {"result"}),
      registry.AddCounter("topofit_agent_unhealthy_gpus_published_total",
                          "Patches of the node's topofit.io/unhealthy-gpus annotation (GPUs the health check found "
                          "unhealthy; removed once all are healthy again)",
                          {"result"}),
      registry.AddCounter("topofit_agent_nvidia_smi_errors_total", "nvidia-smi runs that failed or did not parse"),
      registry.AddGauge("topofit_agent_list_and_watch_streams", "ListAndWatch streams open now"),
      registry.AddCounter("topofit_agent_list_and_watch_refused_total",
                          "ListAndWatch calls refused with RESOURCE_EXHAUSTED because the most streams were open"),
  };
}

}  // namespace topofit::agent
