#pragma once

// `topofit agent`: the node agent, one per GPU node (a DaemonSet). It
//   - discovers the node's GPUs with nvidia-smi and re-checks their health every health_interval;
//   - publishes the node's topology (UUIDs, NUMA nodes) as `topofit.io/gpu-topology`, and the GPUs it found
//     unhealthy as `topofit.io/unhealthy-gpus`, when they changed;
//   - is the kubelet's device plugin for resource_name: registers (again whenever the kubelet's socket is
//     recreated), lists the GPUs by UUID with NUMA node and health, and gives each pod being admitted the
//     GPUs the extender chose for it (pod_choice.h), else topofit's allocator's best set;
//   - reads the kubelet's pod-resources API at start, on pod events and every correction_interval, and
//     patches the `topofit.io/gpu-ids` of pods that hold other GPUs than they say.
// Ready once the GPUs are listed, the kubelet has accepted the registration and the node's pods are known;
// NotReadyReason() says which is missing.

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/logger.h>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "agent/agent_metrics.h"
#include "agent/command_runner.h"
#include "agent/device_plugin_service.h"
#include "agent/device_table.h"
#include "agent/gpu_discovery.h"
#include "agent/gpu_ids_correction.h"
#include "agent/kubelet_socket.h"
#include "agent/node_pods.h"
#include "agent/pod_annotator.h"
#include "kubeclient/kube_api.h"
#include "kubeclient/list_watcher.h"
#include "kubeclient/rest_client.h"
#include "server/clock.h"
#include "server/metrics.h"

namespace topofit::agent {

struct AgentOptions {
  std::string node_name;  // required
  std::string nvidia_smi = "nvidia-smi";
  absl::Duration health_interval = absl::Seconds(30);
  std::string resource_name = "nvidia.com/gpu";
  std::string device_plugin_dir = "/var/lib/kubelet/device-plugins";
  std::string endpoint = "topofit-gpu.sock";  // the agent's socket, a file in device_plugin_dir
  std::string pod_resources_socket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  DeviceListStrategies strategies{.envvar = true};
  absl::Duration correction_interval = absl::Seconds(30);
  // How often the kubelet's socket is checked for a new kubelet (re-registration follows within this).
  absl::Duration kubelet_poll = absl::Milliseconds(250);
  kubeclient::ListWatchOptions pod_watch;  // the field selector is set from node_name
  // Where GetPreferredAllocation and Allocate answers are recorded as decisions (--decision-db); null:
  // nowhere. Must outlive the agent.
  history::DecisionRecorder* decisions = nullptr;
  // Stamps the decisions; its monotonic time paces registration backoff and correction rounds. Must
  // outlive the agent.
  const server::Clock* clock = &server::SystemClock();
};

class Agent {
 public:
  // `runner`, `rest`, `registry` and `log` must outlive the agent. Fails on options that cannot work.
  static absl::StatusOr<std::unique_ptr<Agent>> Create(AgentOptions options, CommandRunner& runner,
                                                       kubeclient::RestClient& rest,
                                                       server::MetricsRegistry& registry, spdlog::logger& log);
  ~Agent();  // Stop()s
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  void Start();
  // Ends the threads, the device-plugin server (removing its socket) and the pod watch. Idempotent.
  void Stop();

  // "" when ready, else why not, e.g. "GPUs not discovered: nvidia-smi --query-gpu: cannot run ...".
  std::string NotReadyReason() const;

  const DeviceTable& devices() const { return devices_; }
  const AgentMetrics& metrics() const { return metrics_; }
  // Waits until every pending pod annotation is written.
  bool WaitForAnnotations(absl::Duration timeout) const { return annotator_.WaitIdle(timeout); }

 private:
  Agent(AgentOptions options, CommandRunner& runner, kubeclient::RestClient& rest, server::MetricsRegistry& registry,
        spdlog::logger& log);

  void GpuLoop();
  void KubeletLoop();
  void CorrectionLoop();
  // One discovery or health check; returns after updating the table and the metrics.
  void CheckGpus();
  void PublishNodeAnnotations();
  void CorrectOnce();
  void UpdateDeviceGauge();
  void SetReason(std::string* field, std::string reason);

  const AgentOptions options_;
  spdlog::logger& log_;
  kubeclient::RestClient& rest_;
  AgentMetrics metrics_;
  GpuDiscovery discovery_;
  DeviceTable devices_;
  NodePods pods_;
  kubeclient::KubeApi kube_;
  PodAnnotator annotator_;
  DevicePluginService service_;
  PluginSocket socket_;
  PodResourcesClient pod_resources_;
  std::unique_ptr<kubeclient::ListWatcher> pod_watch_;

  mutable absl::Mutex mu_;
  std::string discovery_error_ ABSL_GUARDED_BY(mu_) = "not run yet";
  std::string registration_error_ ABSL_GUARDED_BY(mu_) = "not registered yet";
  std::string published_ ABSL_GUARDED_BY(mu_);  // the annotations last seen on the node (descriptor, unhealthy)
  std::vector<QueriedGpu> known_ ABSL_GUARDED_BY(mu_);
  bool pods_changed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<GpuIdsCorrection> corrections_sent_;  // the correction thread's own

  absl::Notification stop_;
  std::thread gpu_thread_, kubelet_thread_, correction_thread_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace topofit::agent
